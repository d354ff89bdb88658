import Foundation
import PostgresClient
import Testing
import TestSupport

/// Issue 21: `plan --out` records each step's SHA-256 digest, the identity its checkpoints
/// carry. A plan the previous release saved (no digests, a heavyweight step making and dropping
/// `<store>~staging._checkpoint`) still applies; a digest that differs is refused.
@Suite("saved plans across the checkpoint table's move (metadata layout 4)")
struct LayoutThreeSavedPlanTests {
    /// The previous release's statement making the checkpoint table, as its plan files hold it.
    static let layoutThreeCheckpointTable = LayoutThreeFixture.checkpointTable(staging: "kitchen~staging")

    /// A heavyweight plan of the kitchen store saved now: the file, and its JSON.
    static func savedKitchenPlan(_ url: String, in folder: URL) throws -> (model: URL, file: String, json: [String: Any]) {
        let model = folder.appendingPathComponent("Kitchen")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Pipeline.kitchenAtVersionOne(url, model: model)
        let file = folder.appendingPathComponent("plan.json").path
        let plan = try OrchestratorBinary.run(["plan", "--model", model.path, "--out", file], databaseURL: url)
        try #require(plan.exitCode == 0, "\(plan)")
        return (model, file, try jsonObject(String(contentsOfFile: file, encoding: .utf8)))
    }

    static func write(_ json: [String: Any], to file: String) throws {
        try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys]).write(to: URL(fileURLWithPath: file))
    }

    @Test("a heavyweight plan saved by the previous release, with its _checkpoint statements and no digests, still applies", integration)
    func layoutThreePlanApplies() throws {
        try withTemporaryFolder { folder in
            try TestDatabase.withFreshDatabase { url in
                let (model, file, json) = try Self.savedKitchenPlan(url, in: folder)
                var steps = try #require(json["steps"] as? [[String: Any]])
                #expect(steps.count == 1 && steps[0]["kind"] as? String == "heavyweight")
                #expect((steps[0]["digest"] as? String)?.count == 64, "a plan saved now records the step's digest")
                // As the previous release wrote it.
                var statements = try #require(steps[0]["statements"] as? [String])
                #expect(!statements.contains { $0.contains("_checkpoint") })
                let created = try #require(statements.firstIndex(of: #"CREATE SCHEMA "kitchen~staging""#))
                statements.insert(Self.layoutThreeCheckpointTable, at: created + 1)
                let drop = try #require(statements.firstIndex(of: #"DROP TABLE "kitchen"."_association_rows", "kitchen"."_changes""#))
                statements[drop] = #"DROP TABLE "kitchen"."_association_rows", "kitchen"."_checkpoint", "kitchen"."_changes""#
                steps[0]["statements"] = statements
                steps[0]["digest"] = nil
                var old = json
                old["steps"] = steps
                try Self.write(old, to: file)

                let apply = try OrchestratorBinary.run(["apply", "--model", model.path, "--plan", file], databaseURL: url)
                #expect(apply.exitCode == 0, "\(apply)")
                #expect(apply.stderr.isEmpty, "\(apply)")
                #expect(try Pipeline.value(url, "SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'") == "Kitchen 2")
                #expect(try Pipeline.value(url, "SELECT count(*) FROM kitchen.recipe") == "250")
                #expect(try Pipeline.value(url, "SELECT to_regclass('kitchen._checkpoint') IS NULL") == "t")
                #expect(try Pipeline.value(url, "SELECT count(*) FROM orchestrator.checkpoints") == "0")
            }
        }
    }

    @Test("apply --plan refuses a saved step whose digest is not the step planned now, changing nothing", integration)
    func anotherDigestIsRefused() throws {
        try withTemporaryFolder { folder in
            try TestDatabase.withFreshDatabase { url in
                let (model, file, json) = try Self.savedKitchenPlan(url, in: folder)
                var steps = try #require(json["steps"] as? [[String: Any]])
                let digest = try #require(steps[0]["digest"] as? String)
                steps[0]["digest"] = String(repeating: "0", count: 64)
                var changed = json
                changed["steps"] = steps
                try Self.write(changed, to: file)
                let before = try Pipeline.dump(url)

                let apply = try OrchestratorBinary.run(["apply", "--model", model.path, "--plan", file], databaseURL: url)
                #expect(apply.exitCode == 1, "\(apply)")
                #expect(apply.stderrLines == [
                    "error: the plan saved in \(file) is not what apply would run now: step 1: its step digest was \(String(repeating: "0", count: 64)), now \(digest) (the work of its passes or online phases changed); nothing was changed (run plan --out again and review the new plan)",
                ], "\(apply)")
                #expect(try Pipeline.dump(url) == before, "nothing was changed")
            }
        }
    }
}
