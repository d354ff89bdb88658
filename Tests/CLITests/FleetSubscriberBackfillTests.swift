import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 24, item 3 in a fleet: `fleet apply` over a publisher server naming a subscriber
/// server, its stores each at a one-step lightweight backfill (ReplicationBackfillTests' Stock
/// model), migrated in `ReplicatedBackfill`'s order with the waits bounded by the server's
/// `subscriberWait`, while a writer inserts at the publisher.
@Suite("fleet apply of a backfill step with a server's subscriber", .serialized, containers)
struct FleetSubscriberBackfillTests {
    static let stores = ["stock_a", "stock_b"]

    static func rows(_ store: String) -> SQL {
        "SELECT coalesce(string_agg(t::text, '|' ORDER BY t._pk), '') AS v FROM \(ident: store, "item") AS t"
    }

    /// Stock 1 in both stores on both servers, 90 items in each at the publisher (a third
    /// without a name), one publication of both schemas, subscribed and caught up. On the
    /// subscriber, a trigger that fires for every writer (`ENABLE ALWAYS`) records each item
    /// whose name goes from NULL to a value, and whether the apply worker (`replica`) or a
    /// session of the subscriber's own (`origin`) wrote it.
    static func withReplicatedStores(
        _ body: (_ publisher: PostgresContainer, _ subscriber: PostgresContainer, _ folder: URL, _ model: String, _ publishing: PostgresConnection, _ subscribing: PostgresConnection) throws -> Void
    ) throws {
        try Topology.withPublisherAndSubscriber { publisher, subscriber in
            try withTemporaryFolder { folder in
                let model = try ReplicationBackfillTests.writeModel(in: folder)
                for server in [publisher, subscriber] {
                    for store in stores {
                        let create = try OrchestratorBinary.run(["apply", "--model", model, "--to", "Stock 1", "--store", store], databaseURL: server.url())
                        try #require(create.exitCode == 0, "\(create)")
                    }
                }
                let publishing = try PostgresConnection(url: publisher.url())
                defer { publishing.close() }
                for store in stores {
                    try publishing.execute("""
                        INSERT INTO \(ident: store, "item") (name, sku, price)
                        SELECT CASE WHEN i % 3 = 0 THEN NULL ELSE 'item ' || i END, 'sku ' || i, i FROM generate_series(1, 90) AS i
                        """)
                }
                try publishing.execute("CREATE PUBLICATION stock FOR TABLES IN SCHEMA stock_a, stock_b")
                let subscribing = try PostgresConnection(url: subscriber.url())
                defer { subscribing.close() }
                try subscribing.execute("""
                    CREATE TABLE public.name_fills (store text NOT NULL, pk bigint NOT NULL, role text NOT NULL);
                    CREATE FUNCTION public.record_name_fill() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        INSERT INTO public.name_fills VALUES (TG_TABLE_SCHEMA, NEW._pk, current_setting('session_replication_role'));
                        RETURN NEW;
                    END $$
                    """)
                for store in stores {
                    try subscribing.execute("""
                        CREATE TRIGGER record_name_fill AFTER UPDATE ON \(ident: store, "item") FOR EACH ROW
                        WHEN (OLD.name IS NULL AND NEW.name IS NOT NULL) EXECUTE FUNCTION public.record_name_fill()
                        """)
                    try subscribing.execute("ALTER TABLE \(ident: store, "item") ENABLE ALWAYS TRIGGER record_name_fill")
                }
                let conninfo = try Topology.subscriptionConnection(to: publisher)
                try subscribing.execute(SQL(unsafeRaw: "CREATE SUBSCRIPTION stock CONNECTION \(quoteLiteral(conninfo)) PUBLICATION stock"))
                for store in stores {
                    let first = try publishing.execute(rows(store)).value(0, "v") ?? ""
                    try #require(Topology.waitFor(first, query: rows(store).text, on: subscriber.url()) == first, "the subscriber never got the first rows of \(store)")
                }
                try #require(Topology.waitFor("0", query: "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')", on: subscriber.url()) == "0")
                try body(publisher, subscriber, folder, model, publishing, subscribing)
                try subscribing.execute("DROP SUBSCRIPTION stock")
            }
        }
    }

    static func writeFleet(in folder: URL, publisher: PostgresContainer, subscriber: PostgresContainer, subscriberWait: String) throws -> String {
        let fleet = folder.appendingPathComponent("fleet.yaml").path
        let text = """
            servers:
              - name: pub
                url: "\(publisher.url())"
                stores: [stock_a, stock_b]
                subscriberWait: \(subscriberWait)
                subscribers: [{name: sub, url: "\(subscriber.url())"}]

            """
        try Data(text.utf8).write(to: URL(fileURLWithPath: fleet))
        return fleet
    }

    @Test("fleet apply runs a backfill step on the publisher and its subscriber's stores: every row arrives, each NULL name filled once, by replication")
    func backfillWithWriter() throws {
        try Self.withReplicatedStores { publisher, subscriber, folder, model, publishing, subscribing in
            let fleet = try Self.writeFleet(in: folder, publisher: publisher, subscriber: subscriber, subscriberWait: "60")
            let writers = Self.stores.map { TwinWriter.repeating(url: publisher.url(), "INSERT INTO \(ident: $0, "item") (name, price) VALUES ('written during', 1)") }
            let apply = try OrchestratorBinary.run(
                ["fleet", "apply", "--fleet", fleet, "--model", model, "--run", "backfill", "--allow-data-loss"], databaseURL: nil
            )
            let written = try writers.map { try $0.stopCounting() }
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(apply.stdoutLines.contains { $0.hasPrefix("run backfill: 2 stores") && $0.contains("2 migrated") }, "\(apply)")
            #expect(!apply.stdout.contains(publisher.password) && !apply.stderr.contains(subscriber.password))
            #expect(written.allSatisfy { $0 > 0 })
            for (store, written) in zip(Self.stores, written) {
                try publishing.execute("INSERT INTO \(ident: store, "item") (name, price, note) SELECT 'after ' || i, i, 'n' FROM generate_series(1, 20) AS i")
                let last = try publishing.execute(Self.rows(store)).value(0, "v") ?? ""
                #expect(Topology.waitFor(last, query: Self.rows(store).text, on: subscriber.url()) == last, "rows of \(store) committed at the publisher never reached the subscriber")
                let shape: SQL = """
                    SELECT (SELECT version_name FROM orchestrator.stores WHERE store = \(store)) AS version,
                           (SELECT attnotnull FROM pg_attribute WHERE attrelid = \(store + ".item")::regclass AND attname = 'name') AS required,
                           (SELECT count(*) FROM pg_attribute WHERE attrelid = \(store + ".item")::regclass AND attname = 'sku' AND NOT attisdropped) AS sku,
                           (SELECT count(*) FROM \(ident: store, "item") WHERE name = 'written during') AS during
                    """
                for connection in [publishing, subscribing] {
                    let found = try connection.execute(shape)
                    #expect(found.value(0, "version") == "Stock 2", "\(store)")
                    #expect(found.bool(0, "required") == true, "\(store)")
                    #expect(found.int(0, "sku") == 0, "\(store)")
                    #expect(found.int(0, "during") == Int64(written), "\(store)")
                }
                // The 30 NULL names were filled once each, all by the apply worker: the subscriber wrote none itself.
                let fills = try subscribing.execute("""
                    SELECT count(*) AS n, count(DISTINCT pk) AS rows, count(*) FILTER (WHERE role <> 'replica') AS own FROM public.name_fills WHERE store = \(store)
                    """)
                #expect(fills.int(0, "n") == 30, "\(store)")
                #expect(fills.int(0, "rows") == 30, "\(store)")
                #expect(fills.int(0, "own") == 0, "\(store)")
                // The backfill ran once, at the publisher: the subscriber's recorded step has no UPDATE.
                let ran: SQL = "SELECT statements::text AS s FROM orchestrator.migrations WHERE store = \(store) AND to_version = 'Stock 2' AND outcome = 'succeeded'"
                #expect(try publishing.execute(ran).value(0, "s")?.contains("UPDATE") == true, "\(store)")
                let theirs = try subscribing.execute(ran).value(0, "s") ?? ""
                #expect(!theirs.contains("UPDATE") && theirs.contains("DROP COLUMN"), "\(store): \(theirs)")
            }
            #expect(try subscribing.execute("SELECT count(pid) AS n FROM pg_stat_subscription WHERE subname = 'stock'").int(0, "n") == 1)
        }
    }

    @Test("a subscription that does not catch up fails the stores at the server's subscriberWait, before the subscriber drops anything; a rerun finishes them")
    func boundedBySubscriberWait() throws {
        try Self.withReplicatedStores { publisher, subscriber, folder, model, publishing, subscribing in
            try subscribing.execute("ALTER SUBSCRIPTION stock DISABLE")
            #expect(Topology.waitFor("0", query: "SELECT count(pid) FROM pg_stat_subscription", on: subscriber.url()) == "0")
            let fleet = try Self.writeFleet(in: folder, publisher: publisher, subscriber: subscriber, subscriberWait: "2.5")
            let arguments = ["fleet", "apply", "--fleet", fleet, "--model", model, "--run", "bounded", "--allow-data-loss"]
            let stopped = try OrchestratorBinary.run(arguments, databaseURL: nil)
            #expect(stopped.exitCode == 1, "\(stopped)")
            #expect(stopped.stdout.contains("waited 2.5 s (subscriberWait of server pub in fleet.yaml) for subscription stock of subscriber sub"), "\(stopped)")
            #expect(!stopped.stdout.contains(subscriber.password) && !stopped.stderr.contains(subscriber.password))
            let columns = "SELECT string_agg(attname::text, ',' ORDER BY attnum) AS c FROM pg_attribute WHERE attrelid = 'stock_a.item'::regclass AND attnum > 0 AND NOT attisdropped"
            #expect(try subscribing.execute(SQL(unsafeRaw: columns)).value(0, "c") == "_pk,_entity,name,sku,price,note")
            #expect(try subscribing.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'stock_a'").value(0, "version_name") == "Stock 1")
            try subscribing.execute("ALTER SUBSCRIPTION stock ENABLE")
            _ = try Self.writeFleet(in: folder, publisher: publisher, subscriber: subscriber, subscriberWait: "60")
            let finished = try OrchestratorBinary.run(arguments, databaseURL: nil)
            #expect(finished.exitCode == 0, "\(finished)")
            for store in Self.stores {
                let last = try publishing.execute(Self.rows(store)).value(0, "v") ?? ""
                #expect(Topology.waitFor(last, query: Self.rows(store).text, on: subscriber.url()) == last, "\(store)")
                #expect(try subscribing.execute("SELECT version_name FROM orchestrator.stores WHERE store = \(store)").value(0, "version_name") == "Stock 2")
                #expect(try subscribing.execute("SELECT count(*) FILTER (WHERE role <> 'replica') AS own, count(*) AS n FROM public.name_fills WHERE store = \(store)").int(0, "n") == 30)
            }
        }
    }
}
