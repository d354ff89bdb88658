import Foundation
import PostgresClient
import Testing
import TestSupport

/// While two versions are live, `status` checks the previous version's views as part of the
/// store's contract (`ViewsDrift`): a view dropped or changed by hand is drift that blocks.
@Suite(integration) struct ExpandDriftTests {
    @Test func statusChecksThePreviousVersionsViews() throws {
        try ShopSession.with { shop in
            let connection = shop.connection, run = shop.run
            #expect(try run(["apply", "--to", "Shop 2"]).exitCode == 0)
            try connection.execute("INSERT INTO shop.item (_entity, name, sku) VALUES ('Item', 'pen', 'P-1')")
            #expect(try run(["apply", "--expand", "--to", "Shop 3", "--allow-data-loss"]).exitCode == 0)

            let clean = try run(["status", "--format", "json"])
            #expect((try jsonObject(clean.stdout)["drift"] as? [Any])?.isEmpty == true, "\(clean)")

            // The view rebuilt by hand without sku, with a column of its own.
            try connection.execute(#"DROP VIEW "shop@Shop_2".item CASCADE"#)
            try connection.execute(#"CREATE VIEW "shop@Shop_2".item AS SELECT _pk, _entity, name, 1 AS mine FROM shop.item"#)
            let changed = try run(["status", "--format", "json"])
            let items = try #require(try jsonObject(changed.stdout)["drift"] as? [[String: Any]], "\(changed)")
            #expect(items.map { "\($0["kind"]!) \($0["object"]!) \($0["table"]!).\($0["column"] as? String ?? "")" }
                == ["missing column shop@Shop_2.item.sku", "extra column shop@Shop_2.item.mine"], "\(changed)")
            let check = try run(["status", "--check"])
            #expect(check.exitCode == 1, "\(check)")
            #expect(check.stdout.contains("missing column shop@Shop_2.item.sku (expected: text)"), "\(check)")

            try connection.execute(#"DROP VIEW "shop@Shop_2".item"#)
            let missing = try run(["status", "--check"])
            #expect(missing.exitCode == 1 && missing.stdout.contains("  missing view shop@Shop_2.item"), "\(missing)")
            // The store's own tables are not drifted.
            #expect(!missing.stdout.contains("table item"), "\(missing)")
        }
    }
}
