import Foundation
import Testing
import PostgresClient
import TestSupport

/// `plan --online` and `apply --online` as a user runs them, on the bench's lightweight step.
@Suite(integration) struct OnlineCommandTests {
    @Test func planOnlineShowsThePhasesAndApplyOnlineRunsThemInBatches() throws {
        try TestDatabase.withFreshDatabase { url in
            try Pipeline.benchAtVersionOne(url)
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }

            let plan = try OrchestratorBinary.run(["plan", "--online", "--format", "json", "--model", "bench/model", "--store", "recipes"], databaseURL: url)
            #expect(plan.exitCode == 0, "\(plan)")
            let steps = try #require(try jsonObject(plan.stdout)["steps"] as? [[String: Any]])
            let online = try #require(steps.first?["online"] as? [String: Any])
            #expect(online["supported"] as? Bool == true)
            #expect(online["refusal"] is NSNull && online["refusalCodes"] as? [String] == [], "a step that runs online has no refusal, and no codes")
            let phases = try #require(online["phases"] as? [[String: Any]])
            #expect(phases.contains { $0["execution"] as? String == "batches" && ($0["batchStatement"] as? String)?.contains(":from") == true })
            #expect(phases.contains { $0["execution"] as? String == "outsideTransaction" && $0["hold"] as? String == "scan" && $0["blocksWrites"] as? Bool == false })
            #expect((phases.last?["summary"] as? String)?.hasPrefix("switch over: drop trigger") == true)
            #expect(steps.first?["statements"] != nil, "the plan's own fields stay")

            let text = try OrchestratorBinary.run(["plan", "--online", "--model", "bench/model", "--store", "recipes"], databaseURL: url)
            #expect(text.stdoutLines.contains("apply --online:"), "\(text)")
            #expect(text.stdoutLines.contains { $0.contains("SHARE UPDATE EXCLUSIVE, held for a scan of the table; reads and writes go on") })

            let apply = try OrchestratorBinary.run(["apply", "--online", "--batch-size", "2", "--model", "bench/model", "--store", "recipes"], databaseURL: url)
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(try connection.execute("SELECT count(*) FROM recipes.recipe WHERE rating = 0").rows.first?.first == "4")
            #expect(try connection.execute("SELECT count(*) FROM recipes.cuisine__recipes").rows.first?.first == "9")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'recipes'").rows.first?.first == "Bench 2")
        }
    }

    @Test func aBatchSizeOfZeroIsAUsageError() throws {
        let result = try OrchestratorBinary.run(["apply", "--online", "--batch-size", "0", "--model", "bench/model"], databaseURL: "postgres://nowhere.invalid/db")
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.contains("--batch-size must be a positive number of rows"))
    }
}
