import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 24: a heavyweight step swaps every table of the store (offline and `--online`); the
/// store stays published as it was, the subscriber's subscription keeps writing into its new
/// tables, and rows written at the publisher during and after the migrations all arrive, also
/// when `apply --subscriber` migrates both; bad subscriber input changes nothing.
@Suite("Publications and subscriptions across a swap", .serialized, containers)
struct ReplicationTests {
    enum Form: String, CaseIterable, CustomStringConvertible {
        case tablesInSchema, tableList
        var description: String { rawValue }

        var create: SQL {
            switch self {
            case .tablesInSchema: "CREATE PUBLICATION kitchen FOR TABLES IN SCHEMA kitchen"
            case .tableList: "CREATE PUBLICATION kitchen FOR TABLE kitchen.chef, kitchen.recipe"
            }
        }
    }

    /// Each table's rows as text, in key order: equal on both servers when replication kept up.
    static func rows(on url: String, tables: [String] = ["chef", "recipe"]) throws -> String {
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        return try tables.map { table in
            try connection.execute("SELECT coalesce(string_agg(t::text, '|' ORDER BY t._pk), '') AS v FROM \(ident: "kitchen", table) AS t").value(0, "v") ?? ""
        }.joined(separator: "\n")
    }

    /// Polls until both servers hold the same rows of `tables` (60 s at most); returns whether they do.
    static func converge(_ publisher: PostgresContainer, _ subscriber: PostgresContainer, tables: [String] = ["chef", "recipe"]) throws -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if try rows(on: publisher.url(), tables: tables) == rows(on: subscriber.url(), tables: tables) { return true }
            Thread.sleep(forTimeInterval: 0.3)
        }
        return false
    }

    /// Kitchen 1 on a publisher and a subscriber, rows on the publisher, its publication of
    /// `form` (chef with REPLICA IDENTITY FULL) and the subscription, caught up (or, not
    /// `enabled`, created disabled: its first copy not started).
    static func withReplicatedKitchen(
        _ form: Form, enabled: Bool = true,
        _ body: (_ publisher: PostgresContainer, _ subscriber: PostgresContainer, _ folder: URL, _ publishing: PostgresConnection, _ subscribing: PostgresConnection) throws -> Void
    ) throws {
        try Topology.withPublisherAndSubscriber { publisher, subscriber in
            try withTemporaryFolder { folder in
                try KitchenModel.write(in: folder)
                for server in [publisher, subscriber] {
                    let create = try OrchestratorBinary.run(["apply", "--model", folder.path, "--to", "Kitchen 1"], databaseURL: server.url())
                    try #require(create.exitCode == 0, "\(create)")
                }
                let publishing = try PostgresConnection(url: publisher.url())
                defer { publishing.close() }
                try publishing.execute("INSERT INTO kitchen.chef (name) SELECT 'chef ' || i FROM generate_series(1, 50) AS i")
                try publishing.execute("""
                    INSERT INTO kitchen.recipe (name, temperature, amount, chef_pk) SELECT 'recipe ' || i, 300 + i, i, 1 + i % 50 FROM generate_series(1, 200) AS i
                    """)
                try publishing.execute(form.create)
                try publishing.execute("ALTER TABLE kitchen.chef REPLICA IDENTITY FULL")
                let subscribing = try PostgresConnection(url: subscriber.url())
                defer { subscribing.close() }
                let conninfo = try Topology.subscriptionConnection(to: publisher)
                try subscribing.execute(SQL(unsafeRaw: "CREATE SUBSCRIPTION kitchen CONNECTION \(quoteLiteral(conninfo)) PUBLICATION kitchen WITH (enabled = \(enabled))"))
                if enabled {
                    try #require(try Self.converge(publisher, subscriber), "the subscriber never got the first rows")
                    // Equal rows come before the end of the first copy (state f, then s): wait for it,
                    // as a step is refused until then (subscriptionSyncing).
                    try #require(Topology.waitFor("0", query: "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')", on: subscriber.url()) == "0")
                }
                try body(publisher, subscriber, folder, publishing, subscribing)
                try subscribing.execute("DROP SUBSCRIPTION kitchen")
            }
        }
    }

    /// Rows written at the publisher after both migrated: new recipes, renamed chefs, deleted
    /// recipes; then both servers must converge, at Kitchen 2.
    static func writeAfterAndConverge(_ publisher: PostgresContainer, _ subscriber: PostgresContainer, _ publishing: PostgresConnection, during: Int) throws {
        try publishing.execute("""
            INSERT INTO kitchen.recipe (name, temperature_c, total_cost, author_pk) SELECT 'after ' || i, i, i, 1 FROM generate_series(1, 30) AS i
            """)
        try publishing.execute("UPDATE kitchen.chef SET name = name || ' (renamed)' WHERE _pk <= 5")
        try publishing.execute("DELETE FROM kitchen.recipe WHERE _pk <= 3")
        #expect(try Self.converge(publisher, subscriber), "rows written at the publisher never reached the subscriber")
        let subscribing = try PostgresConnection(url: subscriber.url())
        defer { subscribing.close() }
        let counts = try subscribing.execute("""
            SELECT (SELECT count(*) FROM kitchen.recipe WHERE name LIKE 'after %') AS after,
                   (SELECT count(*) FROM kitchen.chef WHERE name = 'written during') AS during,
                   (SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen') AS version
            """)
        #expect(counts.int(0, "after") == 30)
        #expect(counts.int(0, "during") == Int64(during))
        #expect(counts.value(0, "version") == "Kitchen 2")
    }

    @Test("a heavyweight step keeps the store published; rows written during and after the migrations reach the subscriber",
          arguments: Form.allCases, [[], ["--online"]])
    func heavyweightKeepsPublication(form: Form, mode: [String]) throws {
        try Self.withReplicatedKitchen(form) { publisher, subscriber, folder, publishing, subscribing in
            // The subscriber stops applying while the publisher's store changes shape.
            try subscribing.execute("ALTER SUBSCRIPTION kitchen DISABLE")
            #expect(Topology.waitFor("0", query: "SELECT count(pid) FROM pg_stat_subscription", on: subscriber.url()) == "0")
            // Chefs keep their shape: a writer adds them during the publisher's migration.
            let writer = TwinWriter.repeating(url: publisher.url(), "INSERT INTO kitchen.chef (name) VALUES ('written during')")
            let apply = try OrchestratorBinary.run(["apply", "--model", folder.path] + mode, databaseURL: publisher.url())
            let written = try writer.stopCounting()
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(written > 0)

            let published = try publishing.execute("""
                SELECT coalesce((SELECT string_agg(n.nspname, ',') FROM pg_publication_namespace pn JOIN pg_namespace n ON n.oid = pn.pnnspid), '') AS schemas,
                       coalesce((SELECT string_agg(schemaname || '.' || tablename, ',' ORDER BY schemaname, tablename) FROM pg_publication_tables), '') AS tables,
                       (SELECT relreplident::text FROM pg_class WHERE oid = 'kitchen.chef'::regclass) AS identity
                """)
            #expect(published.value(0, "schemas") == (form == .tablesInSchema ? "kitchen" : ""), "\(published.rows)")
            #expect(published.value(0, "tables") == "kitchen.chef,kitchen.recipe", "\(published.rows)")
            #expect(published.value(0, "identity") == "f")

            let migrate = try OrchestratorBinary.run(["apply", "--model", folder.path, "--allow-subscriber-alone"], databaseURL: subscriber.url())
            #expect(migrate.exitCode == 0, "\(migrate)")
            try subscribing.execute("ALTER SUBSCRIPTION kitchen ENABLE")
            try Self.writeAfterAndConverge(publisher, subscriber, publishing, during: written)
        }
    }

    @Test("apply --subscriber migrates the publisher and the subscriber together; rows written during and after all arrive",
          arguments: Form.allCases, [[], ["--online"]])
    func publisherWithSubscriber(form: Form, mode: [String]) throws {
        try Self.withReplicatedKitchen(form) { publisher, subscriber, folder, publishing, subscribing in
            let writer = TwinWriter.repeating(url: publisher.url(), "INSERT INTO kitchen.chef (name) VALUES ('written during')")
            // Recipes change shape: updates written before the step's write guard are in the
            // old shape, which the subscriber, migrated, could not take (the cut at the guard).
            let updater = TwinWriter.repeating(url: publisher.url(), "UPDATE kitchen.recipe SET name = name || '+' WHERE _pk = 7")
            let apply = try OrchestratorBinary.run(["apply", "--model", folder.path, "--subscriber", subscriber.url()] + mode, databaseURL: publisher.url())
            let written = try writer.stopCounting()
            #expect(try updater.stopCounting() > 0)
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(apply.stdoutLines.contains { $0.hasPrefix("store kitchen: now at 'Kitchen 2'") }, "\(apply)")
            #expect(apply.stdoutLines.contains { $0.hasPrefix("subscriber ") && $0.contains(": store kitchen: now at 'Kitchen 2'") }, "\(apply)")
            #expect(!apply.stdout.contains(publisher.password) && !apply.stderr.contains(subscriber.password))
            #expect(try subscribing.execute("SELECT subenabled FROM pg_subscription WHERE subname = 'kitchen'").bool(0, "subenabled") == true)
            // Refreshed: the subscription's records name the new tables, ready, and nothing of the backup.
            let records = try subscribing.execute("SELECT string_agg(srrelid::regclass::text || ' ' || srsubstate::text, ',' ORDER BY srrelid::regclass::text) AS r FROM pg_subscription_rel")
            #expect(records.value(0, "r") == "kitchen.chef r,kitchen.recipe r")
            try Self.writeAfterAndConverge(publisher, subscriber, publishing, during: written)
        }
    }

    @Test("apply --online --subscriber of a lightweight step adding a column: rows written during and after reach the subscriber", arguments: Form.allCases)
    func lightweightWithSubscriber(form: Form) throws {
        try Topology.withPublisherAndSubscriber { publisher, subscriber in
            try withTemporaryFolder { folder in
                let model = try ShopModel.yaml.write(in: folder).path
                for server in [publisher, subscriber] {
                    let create = try OrchestratorBinary.run(["apply", "--model", model, "--to", "Shop 1", "--store", "shop"], databaseURL: server.url())
                    try #require(create.exitCode == 0, "\(create)")
                }
                let publishing = try PostgresConnection(url: publisher.url())
                defer { publishing.close() }
                try publishing.execute("INSERT INTO shop.item (name) SELECT 'item ' || i FROM generate_series(1, 100) AS i")
                try publishing.execute(form == .tablesInSchema ? "CREATE PUBLICATION shop FOR TABLES IN SCHEMA shop" : "CREATE PUBLICATION shop FOR TABLE shop.item")
                let subscribing = try PostgresConnection(url: subscriber.url())
                defer { subscribing.close() }
                let conninfo = try Topology.subscriptionConnection(to: publisher)
                try subscribing.execute(SQL(unsafeRaw: "CREATE SUBSCRIPTION shop CONNECTION \(quoteLiteral(conninfo)) PUBLICATION shop"))
                let rows = "SELECT coalesce(string_agg(t::text, '|' ORDER BY t._pk), '') FROM shop.item AS t"
                let first = try publishing.execute(SQL(unsafeRaw: rows)).rows.first?.first ?? nil
                try #require(Topology.waitFor(first ?? "", query: rows, on: subscriber.url()) == first)
                try #require(Topology.waitFor("0", query: "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')", on: subscriber.url()) == "0")

                let writer = TwinWriter.repeating(url: publisher.url(), "INSERT INTO shop.item (name) VALUES ('written during')")
                let apply = try OrchestratorBinary.run(
                    ["apply", "--model", model, "--to", "Shop 2", "--store", "shop", "--online", "--subscriber", subscriber.url()], databaseURL: publisher.url()
                )
                let written = try writer.stopCounting()
                #expect(apply.exitCode == 0, "\(apply)")
                #expect(written > 0)
                try publishing.execute("INSERT INTO shop.item (name, sku) SELECT 'after ' || i, 'sku ' || i FROM generate_series(1, 20) AS i")
                try publishing.execute("UPDATE shop.item SET sku = 'set later' WHERE _pk <= 10")
                let last = try publishing.execute(SQL(unsafeRaw: rows)).rows.first?.first ?? nil
                #expect(Topology.waitFor(last ?? "", query: rows, on: subscriber.url()) == last, "rows written at the publisher never reached the subscriber")
                #expect(try subscribing.execute("SELECT count(*) AS n FROM shop.item WHERE name = 'written during'").int(0, "n") == Int64(written))
                #expect(try subscribing.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'shop'").value(0, "version_name") == "Shop 2")
                try subscribing.execute("DROP SUBSCRIPTION shop")
            }
        }
    }

    @Test("plan on a primary lists its streaming standby, and the step's ACCESS EXCLUSIVE locks as a replicationStandbyLocks hazard")
    func planShowsStandby() throws {
        try Topology.withPrimaryAndStandby { primary, _ in
            try withTemporaryFolder { folder in
                try KitchenModel.write(in: folder)
                let create = try OrchestratorBinary.run(["apply", "--model", folder.path, "--to", "Kitchen 1"], databaseURL: primary.url())
                try #require(create.exitCode == 0, "\(create)")
                #expect(Topology.waitFor("1", query: "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'", on: primary.url()) == "1")
                let plan = try OrchestratorBinary.run(["plan", "--model", folder.path], databaseURL: primary.url())
                #expect(plan.exitCode == 0, "\(plan)")
                #expect(plan.stdoutLines.contains { $0.hasPrefix("replication: standby ") && $0.contains("(streaming), replay lag ") }, "\(plan)")
                #expect(plan.stdoutLines.contains { $0.hasPrefix("-- hazard replicationStandbyLocks: the step's ACCESS EXCLUSIVE locks replay on standby ") }, "\(plan)")
                let json = try jsonObject(try OrchestratorBinary.run(["plan", "--model", folder.path, "--format", "json"], databaseURL: primary.url()).stdout)
                let standbys = (json["replication"] as? [String: Any])?["standbys"] as? [[String: Any]] ?? []
                #expect(standbys.count == 1 && standbys.first?["state"] as? String == "streaming", "\(json)")
            }
        }
    }

    @Test("bad input: a subscriber migrated alone, an unreachable subscriber, a subscriber at another version: each a clear error, nothing changed")
    func badSubscriberInput() throws {
        try Self.withReplicatedKitchen(.tablesInSchema) { publisher, subscriber, folder, publishing, subscribing in
            let version = "SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'"
            let alone = try OrchestratorBinary.run(["apply", "--model", folder.path], databaseURL: subscriber.url())
            #expect(alone.exitCode == 1, "\(alone)")
            #expect(alone.stderr.contains("store kitchen is written by subscription kitchen: migrated alone, its publisher's changes stop fitting it. Nothing was changed"), "\(alone)")

            let unreachable = try OrchestratorBinary.run(["apply", "--model", folder.path, "--subscriber", "postgresql://postgres:secret@127.0.0.1:1/postgres"], databaseURL: publisher.url())
            #expect(unreachable.exitCode != 0, "\(unreachable)")
            #expect(unreachable.stderr.contains("127.0.0.1") && !unreachable.stderr.contains("secret"), "\(unreachable)")
            #expect(try publishing.execute(SQL(unsafeRaw: version)).value(0, "version_name") == "Kitchen 1")

            // The subscriber moved on alone (with consent): the two no longer start from the same version.
            try subscribing.execute("ALTER SUBSCRIPTION kitchen DISABLE")
            let consented = try OrchestratorBinary.run(["apply", "--model", folder.path, "--allow-subscriber-alone"], databaseURL: subscriber.url())
            #expect(consented.exitCode == 0, "\(consented)")
            let other = try OrchestratorBinary.run(["apply", "--model", folder.path, "--subscriber", subscriber.url()], databaseURL: publisher.url())
            #expect(other.exitCode == 1, "\(other)")
            #expect(other.stderr.contains("store kitchen is at 'Kitchen 2', the publisher's at 'Kitchen 1'; nothing was changed"), "\(other)")
            #expect(try publishing.execute(SQL(unsafeRaw: version)).value(0, "version_name") == "Kitchen 1")
            #expect(try subscribing.execute("SELECT subenabled FROM pg_subscription WHERE subname = 'kitchen'").bool(0, "subenabled") == false)

            try publishing.execute("CREATE PUBLICATION everything FOR ALL TABLES")
            let everything = try OrchestratorBinary.run(["apply", "--model", folder.path, "--subscriber", subscriber.url()], databaseURL: publisher.url())
            #expect(everything.exitCode == 1, "\(everything)")
            #expect(everything.stderr.contains("publication everything is FOR ALL TABLES: it also publishes orchestrator's metadata"), "\(everything)")
            #expect(try publishing.execute(SQL(unsafeRaw: version)).value(0, "version_name") == "Kitchen 1")
        }
    }
}
