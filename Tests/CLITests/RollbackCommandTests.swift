import Foundation
import Testing
import PostgresClient
import TestSupport

/// `rollback` as a user runs it, on the Shop model: Shop 2 (name, sku) expanded to Shop 3
/// (name, note), the new release writing a note, rolled back to Shop 2.
@Suite(integration) struct RollbackCommandTests {
    @Test func rollbackNamesWhatItLosesReturnsTheStoreToTheOldVersionAndAnExpandRunsAgain() throws {
        try TestDatabase.withFreshDatabase { url in
            try withTemporaryFolder { folder in
                let model = try ShopModel.yaml.write(in: folder).path
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                func run(_ arguments: [String]) throws -> CLIResult { try OrchestratorBinary.run(arguments, databaseURL: url) }
                #expect(try run(["apply", "--to", "Shop 2", "--model", model]).exitCode == 0)
                try connection.execute("INSERT INTO shop.item (_entity, name, sku) VALUES ('Item', 'pen', 'P-1'), ('Item', 'ink', 'I-2')")

                let nothing = try run(["rollback", "--store", "shop"])
                #expect(nothing.exitCode == 1 && nothing.stderr.contains("nothing to roll back"), "\(nothing)")
                #expect(try run(["rollback"]).exitCode == 64)
                #expect(try run(["rollback", "--store", "shop", "--idle-timeout", "1"]).exitCode == 64)
                #expect(try run(["complete", "--store", "shop", "--idle-timeout", "1"]).exitCode == 64)

                #expect(try run(["apply", "--expand", "--to", "Shop 3", "--allow-data-loss", "--model", model]).exitCode == 0)
                try connection.execute("UPDATE shop.item SET note = 'new' WHERE name = 'pen'")
                try connection.execute(#"INSERT INTO "shop@Shop_2".item (name, sku) VALUES ('cap', 'C-3')"#)

                let dryRun = try run(["rollback", "--store", "shop", "--dry-run", "--format", "json"])
                #expect(dryRun.exitCode == 0, "\(dryRun)")
                let planned = try jsonObject(dryRun.stdout)
                #expect(planned["rolledBack"] as? Bool == false && planned["version"] as? String == "Shop 2" && planned["fromVersion"] as? String == "Shop 3")
                let losses = try #require(planned["losses"] as? [[String: Any]])
                #expect(losses.map { $0["code"] as? String } == ["rollbackDropsValues"] && losses.map { $0["rows"] as? Int } == [1], "\(losses)")

                let refused = try run(["rollback", "--store", "shop"])
                #expect(refused.exitCode == 1 && refused.stderr.contains("[rollbackDropsValues] Item.note") && refused.stderr.contains("--allow-data-loss"), "\(refused)")
                #expect(try connection.execute("SELECT note FROM shop.item WHERE name = 'pen'").rows == [["new"]])

                let dryText = try run(["rollback", "--store", "shop", "--dry-run"])
                #expect(dryText.stdoutLines.contains("    [rollbackDropsValues] Item.note (not in 'Shop 2'): its values in item.note are dropped: 1 row"), "\(dryText)")
                let rolled = try run(["rollback", "--store", "shop", "--allow-data-loss", "--lock-timeout", "2000", "--idle-timeout", "60000", "--format", "json"])
                #expect(rolled.exitCode == 0, "\(rolled)")
                let report = try jsonObject(rolled.stdout)
                #expect(report["rolledBack"] as? Bool == true && report["droppedSchema"] as? String == "shop@Shop_2")
                // The skus the expansion kept, and the row the old release inserted through the
                // views with its sku, written to the kept column (docs/two-versions.md).
                #expect(try connection.execute("SELECT name, sku FROM shop.item ORDER BY _pk").rows == [["pen", "P-1"], ["ink", "I-2"], ["cap", "C-3"]])

                let status = try run(["status", "--model", model, "--format", "json"])
                let state = try jsonObject(status.stdout)
                #expect(state["liveVersions"] == nil && state["storeVersion"] as? String == "Shop 2", "\(status)")
                #expect((state["drift"] as? [Any])?.isEmpty == true, "\(status)")
                let history = try run(["history", "--store", "shop"])
                #expect(history.stdout.contains("rollback"), "\(history)")
                let kinds = try connection.execute("SELECT kind, from_version, to_version FROM orchestrator.migrations WHERE store = 'shop' ORDER BY id").rows
                #expect(kinds.suffix(2) == [["expand", "Shop 2", "Shop 3"], ["rollback", "Shop 3", "Shop 2"]])

                let plan = try run(["plan", "--expand", "--to", "Shop 3", "--model", model, "--format", "json"])
                #expect(try jsonObject(plan.stdout)["expansion"] is [String: Any], "\(plan)")
                #expect(try run(["apply", "--expand", "--to", "Shop 3", "--allow-data-loss", "--model", model]).exitCode == 0)
                #expect(try connection.execute(#"SELECT name FROM "shop@Shop_2".item ORDER BY _pk"#).rows == [["pen"], ["ink"], ["cap"]])
            }
        }
    }
}
