import Foundation
import Testing
import PostgresClient
import TestSupport

/// `plan --expand`, `apply --expand`, `status`'s `liveVersions` and `complete` as a user runs
/// them, on the Shop model: Shop 2 (name, sku) -> Shop 3 (name, note) defers the drop of sku.
@Suite(integration) struct ExpandCommandTests {
    @Test func applyExpandServesBothVersionsUntilCompleteAndRefusesWhatItCannotServe() throws {
        try ShopSession.with { shop in
            let connection = shop.connection, run = shop.run
            #expect(try run(["apply", "--to", "Shop 2"]).exitCode == 0)
            try connection.execute("INSERT INTO shop.item (_entity, name, sku) VALUES ('Item', 'pen', 'P-1'), ('Item', 'ink', 'I-2')")

            // Two steps to the current version: one version at a time.
            let several = try run(["plan", "--expand", "--format", "json"])
            let blockers = try #require(try jsonObject(several.stdout)["blockerDetails"] as? [[String: Any]])
            #expect(blockers.map { $0["code"] as? String } == ["expandSeveralSteps"], "\(several)")
            let refused = try run(["apply", "--expand", "--allow-data-loss"])
            #expect(refused.exitCode == 1 && refused.stderr.contains("expand one version at a time with --to"), "\(refused)")

            let plan = try run(["plan", "--expand", "--to", "Shop 3", "--format", "json"])
            let expansion = try #require(try jsonObject(plan.stdout)["expansion"] as? [String: Any], "\(plan)")
            #expect(expansion["viewsSchema"] as? String == "shop@Shop_2")
            #expect((expansion["deferred"] as? [[String: Any]])?.map { $0["sql"] as? String } == [#"ALTER TABLE "shop"."item" DROP COLUMN "sku""#])

            let apply = try run(["apply", "--expand", "--to", "Shop 3", "--allow-data-loss"])
            #expect(apply.exitCode == 0, "\(apply)")
            let status = try run(["status", "--format", "json"])
            let live = try #require(try jsonObject(status.stdout)["liveVersions"] as? [[String: String]], "\(status)")
            #expect(live == [["version": "Shop 3", "schema": "shop"], ["version": "Shop 2", "schema": "shop@Shop_2"]])
            #expect(try run(["status"]).stdoutLines.contains { $0.hasPrefix(#"live versions: 'Shop 3' in shop, 'Shop 2' in "shop@Shop_2""#) })
            // The old version reads its rows, sku kept in its column until complete.
            #expect(try connection.execute(#"SELECT name FROM "shop@Shop_2".item ORDER BY _pk"#).rows == [["pen"], ["ink"]])
            #expect(try connection.execute("SELECT sku FROM shop.item ORDER BY _pk").rows == [["P-1"], ["I-2"]])

            let blocked = try run(["apply"])
            #expect(blocked.exitCode == 1 && blocked.stderr.contains("run orchestrator complete --store shop first"), "\(blocked)")

            let complete = try OrchestratorBinary.run(["complete", "--store", "shop", "--format", "json"], databaseURL: shop.url)
            #expect(complete.exitCode == 0, "\(complete)")
            let report = try jsonObject(complete.stdout)
            #expect(report["droppedSchema"] as? String == "shop@Shop_2" && report["version"] as? String == "Shop 3")
            #expect(try connection.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = 'shop' AND table_name = 'item' ORDER BY 1").rows
                == [["_entity"], ["_pk"], ["name"], ["note"]])
            let again = try OrchestratorBinary.run(["complete", "--store", "shop"], databaseURL: shop.url)
            #expect(again.exitCode == 1 && again.stderr.contains("nothing to complete"), "\(again)")
            #expect(try OrchestratorBinary.run(["complete"], databaseURL: shop.url).exitCode == 64)
            let kinds = try connection.execute("SELECT kind FROM orchestrator.migrations WHERE store = 'shop' ORDER BY id").rows.map { $0[0] ?? "" }
            #expect(kinds.suffix(2) == ["expand", "complete"])
            #expect(try run(["apply"]).exitCode == 0)
        }
    }

    @Test func aPlanSavedWithExpandRunsWithApplyExpandPlanAndIsRefusedWithoutIt() throws {
        try ShopSession.with { shop in
            let connection = shop.connection, run = shop.run
            #expect(try run(["apply", "--to", "Shop 2"]).exitCode == 0)
            try connection.execute("INSERT INTO shop.item (_entity, name, sku) VALUES ('Item', 'pen', 'P-1')")
            try withTemporaryFolder { folder in
                let file = folder.appendingPathComponent("plan.json").path
                let plan = try run(["plan", "--expand", "--to", "Shop 3", "--out", file])
                #expect(plan.exitCode == 0 && plan.stdoutLines.last == "plan saved to \(file): apply it with apply --expand --plan \(file)", "\(plan)")
                let online = try run(["apply", "--online", "--to", "Shop 3", "--allow-data-loss", "--plan", file])
                #expect(online.exitCode == 1 && online.stderr.contains("mode: saved for apply --expand, now apply --online; nothing was changed"), "\(online)")
                #expect(try connection.execute("SELECT count(*) FROM pg_namespace WHERE nspname = 'shop@Shop_2'").rows == [["0"]])
                let apply = try run(["apply", "--expand", "--to", "Shop 3", "--allow-data-loss", "--plan", file])
                #expect(apply.exitCode == 0, "\(apply)")
                #expect(try connection.execute(#"SELECT name, sku FROM "shop@Shop_2".item"#).rows == [["pen", "P-1"]])
            }
        }
    }
}
