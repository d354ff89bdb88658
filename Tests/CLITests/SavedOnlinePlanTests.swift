import Foundation
import Testing
import TestSupport

/// `--online` is one of a saved plan's options: a plan saved for `apply --online` runs only
/// online, and one saved without it only offline.
@Suite("saved plans and --online", integration)
struct SavedOnlinePlanTests {
    /// The bench's store at 'Bench 1' with rows, and a plan of its lightweight step saved with
    /// `plan --out` and `extra` arguments.
    static func withSavedBenchPlan(_ extra: [String], _ body: (_ url: String, _ file: String) throws -> Void) throws {
        try withTemporaryFolder { folder in
            try TestDatabase.withFreshDatabase { url in
                try Pipeline.benchAtVersionOne(url)
                let file = folder.appendingPathComponent("plan.json").path
                let plan = try OrchestratorBinary.run(["plan", "--model", "bench/model", "--store", "recipes", "--out", file] + extra, databaseURL: url)
                try #require(plan.exitCode == 0, "\(plan)")
                try body(url, file)
            }
        }
    }

    /// `apply arguments` is refused naming the option, and the database is as `before`.
    static func expectRefused(_ arguments: [String], file: String, saved: String, now: String, url: String) throws {
        let before = try Pipeline.dump(url)
        let apply = try OrchestratorBinary.run(arguments + ["--model", "bench/model", "--store", "recipes", "--plan", file], databaseURL: url)
        #expect(apply.exitCode == 1, "\(apply)")
        #expect(apply.stdout.isEmpty, "\(apply)")
        #expect(apply.stderr == """
            error: the plan saved in \(file) is not what apply would run now: option --online: saved \(saved), now \(now); \
            nothing was changed (run plan --out again and review the new plan)

            """, "\(apply)")
        #expect(try Pipeline.dump(url) == before, "nothing was changed")
    }

    @Test("a plan saved with plan --online --out runs with apply --online --plan, and records online in its options")
    func onlinePlanRunsOnline() throws {
        try Self.withSavedBenchPlan(["--online"]) { url, file in
            let saved = try jsonObject(String(contentsOfFile: file, encoding: .utf8))
            let options = try #require((saved["fingerprints"] as? [String: Any])?["options"] as? [String: Any])
            #expect(options["online"] as? Bool == true)
            let apply = try OrchestratorBinary.run(["apply", "--online", "--model", "bench/model", "--store", "recipes", "--plan", file], databaseURL: url)
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(apply.stdoutLines.contains { $0.contains(" online: ") && $0.hasSuffix(": started") }, "the online phases ran: \(apply)")
            #expect(try Pipeline.value(url, "SELECT version_name FROM orchestrator.stores WHERE store = 'recipes'") == "Bench 2")
        }
    }

    @Test("a plan saved with --online is refused by apply --plan without it, changing nothing")
    func onlinePlanRefusedOffline() throws {
        try Self.withSavedBenchPlan(["--online"]) { url, file in
            try Self.expectRefused(["apply"], file: file, saved: "on", now: "off", url: url)
        }
    }

    @Test("a plan saved without --online is refused by apply --online --plan, changing nothing")
    func offlinePlanRefusedOnline() throws {
        try Self.withSavedBenchPlan([]) { url, file in
            let saved = try jsonObject(String(contentsOfFile: file, encoding: .utf8))
            #expect(((saved["fingerprints"] as? [String: Any])?["options"] as? [String: Any])?["online"] as? Bool == false)
            try Self.expectRefused(["apply", "--online"], file: file, saved: "off", now: "on", url: url)
        }
    }

    @Test("a plan saved before --online was fingerprinted counts as saved without it")
    func planWithoutTheOnlineField() throws {
        try Self.withSavedBenchPlan([]) { url, file in
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let older = text.replacingOccurrences(of: #"      "online" : false,\#n"#, with: "")
            try #require(older != text, "the saved plan holds the field: \(text)")
            try older.write(toFile: file, atomically: true, encoding: .utf8)
            try Self.expectRefused(["apply", "--online"], file: file, saved: "off", now: "on", url: url)
            let apply = try OrchestratorBinary.run(["apply", "--model", "bench/model", "--store", "recipes", "--plan", file], databaseURL: url)
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(try Pipeline.value(url, "SELECT version_name FROM orchestrator.stores WHERE store = 'recipes'") == "Bench 2")
        }
    }
}
