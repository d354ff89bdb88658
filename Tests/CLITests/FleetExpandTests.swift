import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// `fleet apply --expand`, `fleet status`'s live versions and `fleet complete`, on Shop stores
/// (Shop 2 -> Shop 3 renames nothing and defers the drop of sku) on two servers.
@Suite("Fleet expand and complete")
struct FleetExpandTests {
    @Test("fleet apply --expand serves both versions on every server until fleet complete, which waits for the old version's sessions", integration)
    func expandThenComplete() throws {
        try Self.withShopServers(2) { urls, _, model in
            let stores = [("t_a", urls[0]), ("t_b", urls[1])]
            var connections: [String: PostgresConnection] = [:]
            defer { connections.values.forEach { $0.close() } }
            for (store, url) in stores {
                let made = try OrchestratorBinary.run(["apply", "--model", model, "--store", store, "--to", "Shop 2"], databaseURL: url)
                #expect(made.exitCode == 0, "\(made)")
                let connection = try PostgresConnection(url: url)
                connections[store] = connection
                try connection.execute("INSERT INTO \(ident: store, "item") (_entity, name, sku) VALUES ('Item', 'pen', 'P-1'), ('Item', 'ink', 'I-2')")
            }
            let fleet = try FleetFixture.writeFleet(servers: [("s1", urls[0], ["t_*"]), ("s2", urls[1], ["t_*"])])
            let common = ["--fleet", fleet, "--model", model, "--to", "Shop 3"]

            let apply = try FleetFixture.run(["fleet", "apply", "--expand", "--allow-data-loss", "--run", "expand-1"] + common)
            #expect(apply.exitCode == 0, "\(apply)")
            let status = try FleetFixture.run(["fleet", "status", "--format", "json"] + common)
            let report = try jsonObject(status.stdout)
            let listed = try #require(report["stores"] as? [[String: Any]], "\(status)")
            #expect(listed.map { $0["status"] as? String } == ["upToDate", "upToDate"], "\(status)")
            #expect(listed.map { ($0["liveVersions"] as? [[String: String]])?.last?["schema"] } == ["t_a@Shop_2", "t_b@Shop_2"], "\(status)")
            #expect((report["summary"] as? [String: Any])?["twoVersionsLive"] as? Int == 2, "\(status)")
            let text = try FleetFixture.run(["fleet", "status"] + common)
            #expect(text.stdout.contains("two versions live (apply --expand; fleet complete ends it): 2 stores"), "\(text)")
            for (store, _) in stores {
                // The old release reads the kept sku and writes it; the new release's row has none.
                let connection = connections[store]!
                let old = try connection.execute("SELECT name, sku FROM \(ident: store + "@Shop_2", "item") ORDER BY _pk")
                #expect(old.rows == [["pen", "P-1"], ["ink", "I-2"]], "\(store)")
                try connection.execute("INSERT INTO \(ident: store + "@Shop_2", "item") (name, sku) VALUES ('nib', 'N-3')")
                try connection.execute("UPDATE \(ident: store + "@Shop_2", "item") SET sku = 'P-9' WHERE name = 'pen'")
                try connection.execute("INSERT INTO \(ident: store, "item") (_entity, name, note) VALUES ('Item', 'cap', 'new')")
                let both = try connection.execute("SELECT name, sku FROM \(ident: store, "item") ORDER BY _pk")
                #expect(both.rows == [["pen", "P-9"], ["ink", "I-2"], ["nib", "N-3"], ["cap", nil]], "\(store)")
                let seen = try connection.execute("SELECT name, sku FROM \(ident: store + "@Shop_2", "item") ORDER BY _pk")
                #expect(seen.rows == both.rows, "\(store)")
            }

            // An old-release session reading t_b's views in an open transaction: t_b waits, t_a completes.
            let oldRelease = try PostgresConnection(url: urls[1])
            defer { oldRelease.close() }
            try oldRelease.execute("BEGIN")
            try oldRelease.execute("SELECT count(*) FROM \(ident: "t_b@Shop_2", "item")")
            let first = try FleetFixture.run(["fleet", "complete", "--format", "json"] + common)
            #expect(first.exitCode == 1, "\(first)")
            let outcomes = try #require(try jsonObject(first.stdout)["stores"] as? [[String: Any]], "\(first)")
            #expect(outcomes.map { $0["outcome"] as? String } == ["completed", "failed"], "\(first)")
            #expect((outcomes.last?["error"] as? String)?.contains("still use") == true, "\(first)")
            #expect(first.stderr.contains("1 store not completed: s2/t_b"), "\(first)")
            #expect(try !schemaExists("t_a@Shop_2", on: connections["t_a"]!))
            #expect(try schemaExists("t_b@Shop_2", on: connections["t_b"]!))
            try oldRelease.execute("COMMIT")

            let second = try FleetFixture.run(["fleet", "complete"] + common)
            #expect(second.exitCode == 0, "\(second)")
            #expect(second.stdoutLines == [second.stdoutLines.first { $0.hasPrefix("s2/t_b: completed ('Shop 2' no longer served; 2 statements") } ?? "<none>"], "\(second)")
            for (store, _) in stores {
                let connection = connections[store]!
                #expect(try !schemaExists(store + "@Shop_2", on: connection))
                let columns = try connection.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = \(store) AND table_name = 'item' ORDER BY 1")
                #expect(columns.rows == [["_entity"], ["_pk"], ["name"], ["note"]], "\(store)")
                #expect(try connection.execute("SELECT name FROM \(ident: store, "item") ORDER BY _pk").rows == [["pen"], ["ink"], ["nib"], ["cap"]], "\(store)")
                let kinds = try connection.execute("SELECT kind FROM orchestrator.migrations WHERE store = \(store) ORDER BY id").rows.map { $0[0] ?? "" }
                #expect(kinds.suffix(2) == ["expand", "complete"], "\(store)")
            }
            let none = try FleetFixture.run(["fleet", "complete"] + common)
            #expect(none.exitCode == 0 && none.stdout.contains("no store serves two versions; nothing to complete"), "\(none)")
        }
    }

    @Test("fleet apply --expand fails a store with subscribers alone and fleet complete names an unreachable server, nothing changed, no password", integration)
    func expandRefusalsAndUnreachable() throws {
        try FleetFixture.withServers(1) { urls in
            try withTemporaryFolder { folder in
                let model = try ShopModel.yaml.write(in: folder).path
                let made = try OrchestratorBinary.run(["apply", "--model", model, "--store", "t_a", "--to", "Shop 2"], databaseURL: urls[0])
                #expect(made.exitCode == 0, "\(made)")
                let connection = try PostgresConnection(url: urls[0])
                defer { connection.close() }
                try connection.execute("INSERT INTO t_a.item (_entity, name, sku) VALUES ('Item', 'pen', 'P-1')")
                // A subscriber in the fleet file: --expand keeps one server's old version only.
                let subscribed = try FleetFixture.writeFleet(servers: [("s1", urls[0], ["t_a"])])
                let text = try String(contentsOfFile: subscribed, encoding: .utf8)
                    + "    subscribers: [{name: sub, url: \"\(FleetFixture.unreachableURL)\", stores: [\"t_a\"]}]\n"
                try Data(text.utf8).write(to: URL(fileURLWithPath: subscribed))
                let common = ["--fleet", subscribed, "--model", model, "--to", "Shop 3"]
                let apply = try FleetFixture.run(["fleet", "apply", "--expand", "--allow-data-loss"] + common)
                #expect(apply.exitCode == 1 && apply.stdout.contains("has subscribers in the fleet file"), "\(apply)")
                #expect(!(apply.stdout + apply.stderr).contains("hunter2secret"), "\(apply)")
                let store = try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 't_a'")
                #expect(store.rows == [["Shop 2"]])
                #expect(try connection.execute("SELECT name, sku FROM t_a.item").rows == [["pen", "P-1"]])
                #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.expansions").int(0, "n") == 0)

                // fleet complete with a server not reached: exit 1 naming it, no password.
                let fleet = try FleetFixture.writeFleet(servers: [("s1", urls[0], ["t_a"]), ("down", FleetFixture.unreachableURL, ["t_b"])])
                let complete = try FleetFixture.run(["fleet", "complete", "--fleet", fleet, "--model", model, "--to", "Shop 3"])
                #expect(complete.exitCode == 1 && complete.stdout.contains("down/t_b: unreachable") && complete.stderr.contains("not completed: down/t_b"), "\(complete)")
                #expect(!(complete.stdout + complete.stderr).contains("hunter2secret"), "\(complete)")
            }
        }
    }

    @Test("fleet status judges the previous version's views of expanded stores as status does: a view or a column missing is drift", integration)
    func viewsDriftInFleetStatus() throws {
        try FleetFixture.withServers(1) { urls in
            try withTemporaryFolder { folder in
                let connection = try PostgresConnection(url: urls[0])
                defer { connection.close() }
                let model = try Self.expandThreeStores(in: folder, on: connection, url: urls[0])
                let fleet = try FleetFixture.writeFleet(servers: [("s1", urls[0], ["t_*"])])
                let common = ["--fleet", fleet, "--model", model, "--to", "Shop 3"]
                let clean = try FleetFixture.run(["fleet", "status", "--check"] + common)
                #expect(clean.exitCode == 0, "\(clean)")

                // t_a's view dropped; t_b's rebuilt without sku, which the old release still writes.
                try connection.execute(#"DROP VIEW "t_a@Shop_2".item"#)
                try connection.execute(#"DROP VIEW "t_b@Shop_2".item"#)
                try connection.execute(#"CREATE VIEW "t_b@Shop_2".item AS SELECT _pk, _entity, name FROM t_b.item"#)
                let status = try FleetFixture.run(["fleet", "status", "--format", "json"] + common)
                let listed = try #require(try jsonObject(status.stdout)["stores"] as? [[String: Any]], "\(status)")
                #expect(listed.map { "\($0["store"]!) \($0["status"]!)" } == ["t_a drifted", "t_b drifted", "t_c upToDate"], "\(status)")
                let summary = try jsonObject(status.stdout)["summary"] as? [String: Any]
                let byStatus = summary?["byStatus"] as? [String: Int]
                #expect(byStatus?["drifted"] == 2 && byStatus?["upToDate"] == 1 && summary?["twoVersionsLive"] as? Int == 3, "\(status)")
                let check = try FleetFixture.run(["fleet", "status", "--check"] + common)
                #expect(check.exitCode == 1, "\(check)")
                #expect(check.stdout.contains("t_a@Shop_2.item") && check.stdout.contains("sku"), "\(check)")
                // The rows are untouched, and fleet complete still ends both versions.
                #expect(try connection.execute("SELECT name, sku FROM t_a.item").rows == [["pen", "P-1"]])
                #expect(try FleetFixture.run(["fleet", "complete"] + common).exitCode == 0)
                #expect(try FleetFixture.run(["fleet", "status", "--check"] + common).exitCode == 0)
            }
        }
    }

    @Test("fleet rollback returns every expanded store to the previous version; a store that would lose values fails alone until --allow-data-loss; an unreachable server is named without its password", integration)
    func rollbackEveryExpandedStore() throws {
        try FleetFixture.withServers(2) { urls in
            try withTemporaryFolder { folder in
                let model = try ShopModel.yaml.write(in: folder).path
                let connections = try urls.map { try PostgresConnection(url: $0) }
                defer { connections.forEach { $0.close() } }
                for (store, index) in [("t_a", 0), ("t_b", 1)] {
                    #expect(try OrchestratorBinary.run(["apply", "--model", model, "--store", store, "--to", "Shop 2"], databaseURL: urls[index]).exitCode == 0)
                    try connections[index].execute("INSERT INTO \(ident: store, "item") (_entity, name, sku) VALUES ('Item', 'pen', 'P-1'), ('Item', 'ink', 'I-2')")
                }
                let servers = [("s1", urls[0], ["t_a"]), ("s2", urls[1], ["t_b"])]
                let fleet = try FleetFixture.writeFleet(servers: servers)
                let withDown = try FleetFixture.writeFleet(servers: servers + [("down", FleetFixture.unreachableURL, ["t_c"])])
                let options = ["--model", model, "--to", "Shop 3"]
                #expect(try FleetFixture.run(["fleet", "apply", "--expand", "--allow-data-loss", "--fleet", fleet] + options).exitCode == 0)
                // The new release writes a note, which Shop 2 cannot hold, on t_b; the old one writes on t_a.
                try connections[1].execute("UPDATE t_b.item SET note = 'new' WHERE name = 'pen'")
                try connections[0].execute(#"INSERT INTO "t_a@Shop_2".item (name, sku) VALUES ('nib', 'N-3')"#)

                let dry = try FleetFixture.run(["fleet", "rollback", "--dry-run", "--format", "json", "--fleet", fleet] + options)
                let planned = try #require(try jsonObject(dry.stdout)["stores"] as? [[String: Any]], "\(dry)")
                #expect(planned.map { "\($0["store"]!) \($0["outcome"]!)" } == ["t_a dryRun", "t_b dryRun"], "\(dry)")
                #expect(try connections[1].execute("SELECT count(*) AS n FROM orchestrator.expansions").int(0, "n") == 1)

                let refused = try FleetFixture.run(["fleet", "rollback", "--fleet", withDown] + options)
                #expect(refused.exitCode == 1, "\(refused)")
                #expect(refused.stdout.contains("s1/t_a:") && refused.stdout.contains("rolled back 'Shop 3' -> 'Shop 2'"), "\(refused)")
                #expect(refused.stdout.contains("s2/t_b: failed") && refused.stdout.contains("rollbackDropsValues"), "\(refused)")
                #expect(refused.stdout.contains("down/t_c: unreachable") && refused.stderr.contains("not rolled back: s2/t_b, down/t_c"), "\(refused)")
                #expect(!(refused.stdout + refused.stderr).contains("hunter2secret"), "\(refused)")
                #expect(try connections[0].execute("SELECT name, sku FROM t_a.item ORDER BY _pk").rows == [["pen", "P-1"], ["ink", "I-2"], ["nib", "N-3"]])
                #expect(try connections[1].execute("SELECT name, note FROM t_b.item ORDER BY _pk").rows == [["pen", "new"], ["ink", nil]])

                let consented = try FleetFixture.run(["fleet", "rollback", "--allow-data-loss", "--fleet", fleet] + options)
                #expect(consented.exitCode == 0 && consented.stdout.contains("s2/t_b:"), "\(consented)")
                for (index, store) in ["t_a", "t_b"].enumerated() {
                    let version = try connections[index].execute("SELECT version_name FROM orchestrator.stores WHERE store = \(store)")
                    #expect(version.rows == [["Shop 2"]], "\(store)")
                    #expect(try !schemaExists(store + "@Shop_2", on: connections[index]))
                }
                #expect(try connections[1].execute("SELECT name, sku FROM t_b.item ORDER BY _pk").rows == [["pen", "P-1"], ["ink", "I-2"]])
                let again = try FleetFixture.run(["fleet", "rollback", "--fleet", fleet] + options)
                #expect(again.exitCode == 0 && again.stdout.contains("nothing to roll back"), "\(again)")
            }
        }
    }

    /// `count` fresh databases as servers, a folder, and the Shop model written in it (its path).
    @Test("fleet apply --expand refuses a store whose step is heavyweight (its expansion would wait for complete), that store alone, nothing changed", integration)
    func heavyweightExpansionRefusedInAFleet() throws {
        try FleetFixture.withServers(1) { urls in
            try withTemporaryFolder { folder in
                try KitchenModel.write(in: folder)
                let connection = try PostgresConnection(url: urls[0])
                defer { connection.close() }
                for store in ["k_a", "k_b"] {
                    #expect(try OrchestratorBinary.run(["apply", "--model", folder.path, "--store", store, "--to", "Kitchen 1"], databaseURL: urls[0]).exitCode == 0)
                    try connection.execute("INSERT INTO \(ident: store, "recipe") (name, temperature, amount) VALUES ('soup', 212, 3)")
                }
                let fleet = try FleetFixture.writeFleet(servers: [("s1", urls[0], ["k_*"])])
                let apply = try FleetFixture.run(["fleet", "apply", "--expand", "--fleet", fleet, "--model", folder.path])
                #expect(apply.exitCode == 1, "\(apply)")
                for store in ["k_a", "k_b"] {
                    #expect(apply.stdout.contains("store \(store): step 'Kitchen 1' -> 'Kitchen 2' is heavyweight: its apply --expand waits for orchestrator complete"), "\(apply)")
                    #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = \(store)").rows == [["Kitchen 1"]])
                    #expect(try connection.execute("SELECT name, amount::text FROM \(ident: store, "recipe")").rows == [["soup", "3"]])
                    for schema in ["\(store)~staging", "\(store)@Kitchen_2"] { #expect(try !schemaExists(schema, on: connection)) }
                }
                #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.expansions").int(0, "n") == 0)
            }
        }
    }

    static func withShopServers(_ count: Int, _ body: ([String], URL, String) throws -> Void) throws {
        try FleetFixture.withServers(count) { urls in
            try withTemporaryFolder { folder in try body(urls, folder, try ShopModel.yaml.write(in: folder).path) }
        }
    }

    /// Shop stores t_a, t_b, t_c made at Shop 2 with a row each, then expanded to Shop 3 by
    /// `fleet apply --expand`; the model's path.
    static func expandThreeStores(in folder: URL, on connection: PostgresConnection, url: String) throws -> String {
        let model = try ShopModel.yaml.write(in: folder).path
        for store in ["t_a", "t_b", "t_c"] {
            #expect(try OrchestratorBinary.run(["apply", "--model", model, "--store", store, "--to", "Shop 2"], databaseURL: url).exitCode == 0)
            try connection.execute("INSERT INTO \(ident: store, "item") (_entity, name, sku) VALUES ('Item', 'pen', 'P-1')")
        }
        let fleet = try FleetFixture.writeFleet(servers: [("s1", url, ["t_*"])])
        let expand = try FleetFixture.run(["fleet", "apply", "--expand", "--allow-data-loss", "--fleet", fleet, "--model", model, "--to", "Shop 3"])
        #expect(expand.exitCode == 0, "\(expand)")
        return model
    }

    func schemaExists(_ schema: String, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname = \(schema)").int(0, "n") == 1
    }
}
