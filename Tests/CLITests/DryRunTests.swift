import Foundation
import PostgresClient
import Testing
import TestSupport

/// `apply --dry-run`: every step runs, then everything is rolled back.
@Suite("apply --dry-run")
struct DryRunTests {
    /// "step 1 of 1: <title>: would succeed (12 ms, 6 rows, 0 lock waits)" with the number of
    /// milliseconds replaced by "N".
    static func withoutMilliseconds(_ line: String) -> String {
        line.replacingOccurrences(of: #"\(\d+ ms"#, with: "(N ms", options: .regularExpression)
    }

    @Test("a lightweight step is rehearsed and rolled back: catalog and rows unchanged, byte for byte", integration)
    func lightweightStepLeavesNothing() throws {
        try TestDatabase.withFreshDatabase { url in
            try Pipeline.recipesAtVersionOne(url)
            let before = try Pipeline.dump(url)
            let dryRun = try OrchestratorBinary.run(["apply", "--model", "migrations", "--dry-run"], databaseURL: url)
            #expect(dryRun.exitCode == 0, "\(dryRun)")
            #expect(dryRun.stderr.isEmpty, "\(dryRun)")
            let statements = try #require(dryRun.stdoutLines.first, "\(dryRun)")
            #expect(statements.hasPrefix("step 1 of 1: lightweight 'Recipes 1' -> 'Recipes 3' ("), "\(dryRun)")
            #expect(dryRun.stdoutLines.dropFirst().map(Self.withoutMilliseconds) == [
                "step 1 of 1: lightweight 'Recipes 1' -> 'Recipes 3': would succeed (N ms, 2 rows, 0 lock waits)",
                "store recipes: apply would bring it to 'Recipes 3'; dry run rolled back, nothing was changed",
            ], "\(dryRun)")
            #expect(try Pipeline.dump(url) == before, "the dry run left the database as it was")

            let apply = try OrchestratorBinary.run(["apply", "--model", "migrations", "--format", "json"], databaseURL: url)
            #expect(apply.exitCode == 0, "\(apply)")
            let steps = try #require(try jsonObject(apply.stdoutLines.last ?? "")["steps"] as? [[String: Any]], "\(apply)")
            #expect(steps.first?["rows"] as? Int == 2, "apply counts the rows the dry run reported: \(apply)")
        }
    }

    @Test("a heavyweight step is rehearsed, passes and swap included, and rolled back (JSON)", integration)
    func heavyweightStepLeavesNothing() throws {
        try withTemporaryFolder { folder in
            try TestDatabase.withFreshDatabase { url in
                try Pipeline.kitchenAtVersionOne(url, model: folder)
                let before = try Pipeline.dump(url)
                let dryRun = try OrchestratorBinary.run(["apply", "--model", folder.path, "--dry-run", "--format", "json"], databaseURL: url)
                #expect(dryRun.exitCode == 0, "\(dryRun)")
                #expect(dryRun.stderr.isEmpty, "\(dryRun)")
                let report = try jsonObject(try #require(dryRun.stdoutLines.last, "\(dryRun)"))
                #expect(report["dryRun"] as? Bool == true, "\(dryRun)")
                #expect(report["wouldSucceed"] as? Bool == true, "\(dryRun)")
                #expect(report["storeVersion"] as? String == "Kitchen 1", "\(dryRun)")
                #expect(report["version"] as? String == "Kitchen 2", "\(dryRun)")
                let step = try #require((report["steps"] as? [[String: Any]])?.first, "\(dryRun)")
                #expect(step["kind"] as? String == "heavyweight")
                #expect(step["outcome"] as? String == "wouldSucceed")
                #expect(step["rows"] as? Int == 250, "every recipe copied: \(dryRun)")
                #expect(step["lockWaits"] as? Int == 0)
                #expect(step["lockWaitMs"] as? Int == 0)
                #expect((step["durationMs"] as? Int).map { $0 >= 0 } == true)
                #expect(step["error"] is NSNull)
                #expect(step["failedStatement"] is NSNull)
                #expect(try Pipeline.dump(url) == before, "no staging schema, no backup, no triggers, same rows")
            }
        }
    }

    @Test("a create step on an empty database is rehearsed and leaves not even the metadata schema", integration)
    func createStepLeavesNothing() throws {
        try TestDatabase.withFreshDatabase { url in
            let before = try Pipeline.dump(url)
            let dryRun = try OrchestratorBinary.run(["apply", "--model", "migrations", "--dry-run"], databaseURL: url)
            #expect(dryRun.exitCode == 0, "\(dryRun)")
            #expect(dryRun.stdoutLines.dropFirst().map(Self.withoutMilliseconds) == [
                "step 1 of 1: create 'Recipes 3': would succeed (N ms, 0 rows, 0 lock waits)",
                "store recipes: apply would bring it to 'Recipes 3'; dry run rolled back, nothing was changed",
            ], "\(dryRun)")
            #expect(try Pipeline.dump(url) == before)
            #expect(try Pipeline.value(url, "SELECT count(*) FROM pg_namespace WHERE nspname IN ('recipes', 'orchestrator')") == "0")
        }
    }

    @Test("a failing pre-check is reported as would fail, with exit 1, and nothing changes", integration)
    func failingPreCheck() throws {
        try withTemporaryFolder { folder in
            try write("name: Shop\nversions: [Shop 1, Shop 2]\n", to: "model.yaml", in: folder)
            let owner = "  Owner:\n    attributes:\n      name: string\n    relationships:\n      items: {destination: Item, inverse: owner, toMany: true}\n"
            try write("entities:\n  Item:\n    attributes:\n      name: string\n    relationships:\n      owner: {destination: Owner, inverse: items}\n" + owner, to: "Shop 1.yaml", in: folder)
            try write("entities:\n  Item:\n    attributes:\n      name: string\n    relationships:\n      owner: {destination: Owner, inverse: items, optional: false}\n" + owner, to: "Shop 2.yaml", in: folder)
            try TestDatabase.withFreshDatabase { url in
                let create = try OrchestratorBinary.run(["apply", "--model", folder.path, "--to", "Shop 1"], databaseURL: url)
                try #require(create.exitCode == 0, "\(create)")
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                try connection.execute("INSERT INTO shop.item (_entity, name) SELECT 'Item', 'item ' || g FROM generate_series(1, 3) g")
                let before = try Pipeline.dump(url)

                let dryRun = try OrchestratorBinary.run(["apply", "--model", folder.path, "--dry-run"], databaseURL: url)
                #expect(dryRun.exitCode == 1, "\(dryRun)")
                #expect(dryRun.stderr.isEmpty, "\(dryRun)")
                let lines = dryRun.stdoutLines.map(Self.withoutMilliseconds)
                try #require(lines.count == 3, "\(dryRun)")
                #expect(lines[1].hasPrefix("step 1 of 1: lightweight 'Shop 1' -> 'Shop 2': would fail (N ms, 0 rows, 0 lock waits) at \"check: no "), "\(dryRun)")
                #expect(lines[1].contains("3 rows of item without owner_pk (Item.owner made required)"), "the pre-check's message: \(dryRun)")
                #expect(lines[2] == "store shop: apply would fail at step 1 of 1; dry run rolled back, nothing was changed", "\(dryRun)")
                #expect(try Pipeline.dump(url) == before)

                let json = try OrchestratorBinary.run(["apply", "--model", folder.path, "--dry-run", "--format", "json"], databaseURL: url)
                #expect(json.exitCode == 1, "\(json)")
                let report = try jsonObject(json.stdout)
                #expect(report["wouldSucceed"] as? Bool == false, "\(json)")
                let step = try #require((report["steps"] as? [[String: Any]])?.first, "\(json)")
                #expect(step["outcome"] as? String == "wouldFail", "\(json)")
                #expect((step["failedStatement"] as? String)?.hasPrefix("check: no ") == true, "\(json)")
                #expect((step["error"] as? String)?.contains("3 rows of item without owner_pk (Item.owner made required)") == true, "\(json)")
                #expect(try Pipeline.dump(url) == before)
            }
        }
    }

    @Test("apply --dry-run --plan rehearses a saved plan, and refuses one that no longer matches", integration)
    func dryRunOfSavedPlan() throws {
        try Pipeline.withSavedRecipesPlan { url, file in
            let dryRun = try OrchestratorBinary.run(["apply", "--model", "migrations", "--plan", file, "--dry-run", "--format", "json"], databaseURL: url)
            #expect(dryRun.exitCode == 0, "\(dryRun)")
            #expect(try jsonObject(dryRun.stdout)["wouldSucceed"] as? Bool == true, "\(dryRun)")
            let other = try OrchestratorBinary.run(["apply", "--model", "migrations", "--plan", file, "--dry-run", "--no-backup"], databaseURL: url)
            #expect(other.exitCode == 1, "\(other)")
            #expect(other.stderr.contains("option --no-backup: saved off, now on"), "\(other)")
        }
    }
}
