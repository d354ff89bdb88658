import Foundation
import PostgresClient
import Testing
import TestSupport

/// Issue 24 item 5 as an operator runs it: `apply --online --postpone-switch-over`, seen by
/// `status` from another process while paused and while waiting to switch over, let go by
/// `orchestrator control resume` and `proceed`, an application writing the whole time.
@Suite(integration) struct SteeringCommandTests {
    static let status = ["status", "--model", "bench/model", "--store", "recipes"]

    /// `status --format json`'s `run`, once `accepted` takes it (asked every 0.2 s, at most 120 s).
    static func run(on url: String, where accepted: ([String: Any]?) -> Bool) throws -> [String: Any]? {
        let deadline = Date().addingTimeInterval(120)
        var last: [String: Any]?
        repeat {
            let result = try OrchestratorBinary.run(status + ["--format", "json"], databaseURL: url)
            #expect(result.exitCode == 0, "\(result)")
            last = try jsonObject(result.stdout)["run"] as? [String: Any]
            if accepted(last) { return last }
            Thread.sleep(forTimeInterval: 0.2)
        } while Date() < deadline
        Issue.record("status never showed the expected run; last: \(String(describing: last))")
        return last
    }

    @Test func statusShowsAPausedThenPostponedRunWhichSwitchesOverOnProceed() throws {
        try TestDatabase.withFreshDatabase { url in
            try Pipeline.benchAtVersionOne(url)
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            let pause = try OrchestratorBinary.run(["control", "pause", "--store", "recipes"], databaseURL: url)
            #expect(pause.exitCode == 0, "\(pause)")
            // The application writes the whole time: paused, resumed, waiting, switched over.
            let writer = TwinWriter.repeating(url: url, "INSERT INTO recipes.recipe (name) VALUES ('written while steered')")
            var writerStopped = false
            defer { if !writerStopped { _ = try? writer.stopCounting() } }
            let running = try RunningOrchestrator(
                ["apply", "--online", "--postpone-switch-over", "--batch-size", "2", "--model", "bench/model", "--store", "recipes", "--format", "json"], databaseURL: url
            )
            defer { if running.isRunning { running.kill() } }

            let paused = try Self.run(on: url) { $0?["state"] as? String == "paused" }
            #expect((paused?["step"] as? String) == "step 1 of 1: lightweight 'Bench 1' -> 'Bench 2'", "\(String(describing: paused))")
            #expect((paused?["phase"] as? String)?.isEmpty == false, "\(String(describing: paused))")
            #expect((paused?["reason"] as? String)?.hasPrefix("paused by orchestrator control") == true, "\(String(describing: paused))")
            let text = try OrchestratorBinary.run(Self.status, databaseURL: url)
            #expect(text.stdoutLines.contains { $0.hasPrefix("migration running: step 1 of 1: lightweight 'Bench 1' -> 'Bench 2', ") && $0.contains("; paused: paused by orchestrator control") }, "\(text)")

            let resume = try OrchestratorBinary.run(["control", "resume", "--store", "recipes"], databaseURL: url)
            #expect(resume.exitCode == 0, "\(resume)")
            let waiting = try Self.run(on: url) { $0?["state"] as? String == "waitingToSwitchOver" }
            #expect((waiting?["reason"] as? String)?.contains("orchestrator control proceed --store recipes") == true, "\(String(describing: waiting))")
            #expect(running.isRunning)
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'recipes'").value(0, "version_name") == "Bench 1")

            let proceed = try OrchestratorBinary.run(["control", "proceed", "--store", "recipes", "--format", "json"], databaseURL: url)
            #expect(proceed.exitCode == 0, "\(proceed)")
            let answer = try jsonObject(proceed.stdout)
            #expect(answer["proceed"] as? Bool == true && (answer["postponedStep"] as? String)?.hasPrefix("'Bench 1' -> 'Bench 2' (plan ") == true, "\(proceed)")
            let finished = try running.finish()
            #expect(finished.exitCode == 0, "\(finished)")
            #expect(finished.stdoutLines.contains { $0.contains(#""event":"paused""#) && $0.contains("switch-over postponed") }, "\(finished)")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'recipes'").value(0, "version_name") == "Bench 2")
            // Nothing the writer committed is lost, each row in the new shape (rating backfilled, servings defaulted).
            writerStopped = true
            let written = try writer.stopCounting()
            #expect(written > 0)
            let kept = try connection.execute("""
                SELECT count(*) AS n, count(*) FILTER (WHERE rating = 0 AND servings = 1) AS shaped FROM recipes.recipe WHERE name = 'written while steered'
                """)
            #expect(kept.int(0, "n") == Int64(written))
            #expect(kept.int(0, "shaped") == Int64(written))
            let after = try OrchestratorBinary.run(Self.status + ["--format", "json"], databaseURL: url)
            #expect(try jsonObject(after.stdout)["run"] == nil, "\(after)")
            let proceedAgain = try OrchestratorBinary.run(["control", "proceed", "--store", "recipes"], databaseURL: url)
            #expect(proceedAgain.stdoutLines == ["store recipes: proceed recorded, but no run of it postpones a switch-over now; a run started later with --postpone-switch-over waits for a proceed of its own"], "\(proceedAgain)")
        }
    }

    @Test("plan --online --postpone-switch-over shows a lightweight step's wait for the proceed before its switch-over; without the flag, none")
    func planShowsTheLightweightWait() throws {
        try TestDatabase.withFreshDatabase { url in
            try Pipeline.benchAtVersionOne(url)
            let plan = ["plan", "--online", "--model", "bench/model", "--store", "recipes"]
            let postponed = try OrchestratorBinary.run(plan + ["--postpone-switch-over"], databaseURL: url)
            let plain = try OrchestratorBinary.run(plan, databaseURL: url)
            let numbered = { (result: CLIResult) in result.stdoutLines.filter { $0.hasPrefix("    ") && $0.dropFirst(4).first?.isNumber == true } }
            let waits = numbered(postponed), runs = numbered(plain)
            #expect(waits.count == runs.count + 1, "\(postponed)\n\(plain)")
            #expect(waits.dropLast().last?.contains("wait for orchestrator control proceed --store recipes (--postpone-switch-over)") == true, "\(postponed)")
            #expect(!runs.contains { $0.contains("control proceed") }, "\(plain)")
            // The switch-over is the last phase either way, numbered after the wait.
            #expect(waits.last?.dropFirst(4).hasPrefix("\(waits.count). ") == true && waits.last?.dropFirst(4).drop { $0 != " " } == runs.last?.dropFirst(4).drop { $0 != " " }, "\(postponed)")
            for (arguments, expected) in [(plan + ["--postpone-switch-over"], true), (plan, false)] {
                let json = try OrchestratorBinary.run(arguments + ["--format", "json"], databaseURL: url)
                let steps = try #require(try jsonObject(json.stdout)["steps"] as? [[String: Any]], "\(json)")
                #expect((steps.first?["online"] as? [String: Any])?["waitsToSwitchOver"] as? Bool == expected, "\(json)")
            }
        }
    }

    @Test(arguments: [
        (["apply", "--postpone-switch-over", "--model", "bench/model"], "--postpone-switch-over needs --online"),
        (["plan", "--postpone-switch-over", "--model", "bench/model"], "--postpone-switch-over needs --online"),
        (["apply", "--online", "--postpone-switch-over", "--postpone-timeout", "soon", "--model", "bench/model"], "--postpone-timeout must be a positive duration"),
        (["control", "proceed"], "control needs --store"),
    ])
    func aPostponementWithoutOnlineOrWithABadTimeoutIsAUsageError(arguments: [String], message: String) throws {
        let result = try OrchestratorBinary.run(arguments, databaseURL: "postgres://nowhere.invalid/db")
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
    }
}
