import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// `rollback --model` of a lightweight `apply --expand` stopped before its switch-over, as a
/// user runs it: the run (a rename, then a backfill: the plain views of v1 first) stops at its
/// first batch, the old release writes through `"shop@v1"` meanwhile, and the rollback puts the
/// store back at v1's layout with every row and value; a later `apply --expand` and `complete`
/// give what an offline `apply` gives.
@Suite(integration) struct UnfinishedExpandRollbackCommandTests {
    static let rows: SQL = "SELECT _pk::text, name, rating::text FROM shop.recipe ORDER BY _pk"

    @Test func rollbackWithTheModelUndoesAnExpandStoppedBeforeItsSwitchOver() throws {
        try UnfinishedExpandStatusTests.withStoppedExpand { store in
            let connection = store.connection
            func run(_ arguments: [String], model withModel: Bool = true) throws -> CLIResult { try store.run(arguments, model: withModel) }
            // The old release writes on through its plain views, over the renamed column.
            try connection.execute(#"UPDATE "shop@v1".recipe SET rating = _pk WHERE _pk % 2 = 0 AND rating IS NULL"#)
            try connection.execute(#"INSERT INTO "shop@v1".recipe (_entity, name) VALUES ('Recipe', 'written meanwhile')"#)
            try connection.execute(#"UPDATE "shop@v1".recipe SET name = 'r1 renamed', rating = 5 WHERE name = 'r1'"#)
            let before = try connection.execute(#"SELECT _pk::text, name, rating::text FROM "shop@v1".recipe ORDER BY _pk"#).rows
            #expect(before.count == 51)

            let bare = try run(["rollback"], model: false)
            #expect(bare.exitCode == 1 && bare.stderr.contains("rollback needs the model it ran with (rollback --model PATH --store shop)"), "\(bare)")
            let dry = try run(["rollback", "--dry-run", "--format", "json"])
            #expect(dry.exitCode == 0, "\(dry)")
            let planned = try jsonObject(dry.stdout)
            let statements = planned["statements"] as? [String] ?? []
            #expect(planned["rolledBack"] as? Bool == false && statements.contains(#"ALTER TABLE "shop"."recipe" RENAME COLUMN "title" TO "name""#), "\(dry)")
            #expect(try connection.execute(#"SELECT count(*) AS n FROM "shop@v1".recipe"#).int(0, "n") == 51, "the dry run changed the store")

            let rollback = try run(["rollback", "--format", "json"])
            #expect(rollback.exitCode == 0, "\(rollback)")
            let report = try jsonObject(rollback.stdout)
            #expect(report["fromVersion"] as? String == "v2" && report["version"] as? String == "v1" && report["rolledBack"] as? Bool == true, "\(rollback)")
            #expect((report["losses"] as? [[String: Any]])?.allSatisfy { $0["rows"] as? Int == 0 } == true, "\(rollback)")

            // v1 again: every row and value, no drift, nothing of the run left.
            #expect(try connection.execute(Self.rows).rows == before)
            let status = try jsonObject(try run(["status", "--format", "json"]).stdout)
            #expect(status["storeVersion"] as? String == "v1" && status["unfinishedExpand"] == nil && status["liveVersions"] == nil, "\(status)")
            #expect((status["drift"] as? [Any])?.isEmpty == true, "\(status)")
            #expect(try run(["status", "--check"]).exitCode == 2)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname LIKE 'shop@%'").int(0, "n") == 0)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_trigger WHERE tgname ILIKE 'orchestrator\\_online\\_%'").int(0, "n") == 0)
            #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.checkpoints WHERE store = 'shop'").int(0, "n") == 0)
            let kinds = try connection.execute("SELECT kind FROM orchestrator.migrations WHERE store = 'shop' ORDER BY id").rows.map { $0[0] ?? "" }
            #expect(kinds.last == "rollback", "\(kinds)")
            let again = try run(["rollback"])
            #expect(again.exitCode == 1 && again.stderr.contains("nothing to roll back"), "\(again)")

            // Expanded again from scratch and completed: what the offline step gives the same rows.
            #expect(try run(["apply", "--expand", "--to", "v2"]).exitCode == 0)
            #expect(try run(["complete"], model: false).exitCode == 0)
            let migrated = try connection.execute("SELECT _pk::text, title, rating::text FROM shop.recipe ORDER BY _pk").rows
            #expect(migrated == before.map { [$0[0], $0[1], $0[2] ?? "3"] })
        }
    }
}
