import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 24, section 3: a lightweight step that writes published rows (a backfill) under
/// `apply --subscriber`: the subscriber adds the new column first, takes the publisher's
/// backfill from its subscription (enabled throughout), and drops and tightens last.
@Suite("apply --subscriber of a step that writes published rows", .serialized, containers)
struct ReplicationBackfillTests {
    /// Stock 1: Item(name, sku, price); Stock 2 (`stock2`), by default: name required (default
    /// 'unnamed': its NULLs backfilled), sku gone, note new.
    static func writeModel(in folder: URL, stock1: String = itemVersion, stock2: String = backfillVersion, stock3: String? = nil) throws -> String {
        let model = folder.appendingPathComponent("Stock")
        try write("name: Stock\nversions: [Stock 1, Stock 2\(stock3 == nil ? "" : ", Stock 3")]\n", to: "model.yaml", in: model)
        if let stock3 { try write(stock3, to: "Stock 3.yaml", in: model) }
        try write(stock1, to: "Stock 1.yaml", in: model)
        try write(stock2, to: "Stock 2.yaml", in: model)
        return model.path
    }

    /// Stock 1's Item: every Stock 1 keeps its name, sku and price (the suites' rows fill them).
    static let itemVersion = """
        entities:
          Item:
            attributes:
              name: {type: string}
              sku: {type: string}
              price: {type: int32}
        """

    static let backfillVersion = """
        entities:
          Item:
            attributes:
              name: {type: string, optional: false, default: unnamed}
              price: {type: int32}
              note: {type: string}
        """

    /// Stock 2 only without sku: a step that writes nothing and drops a published column.
    static let dropVersion = """
        entities:
          Item:
            attributes:
              name: {type: string}
              price: {type: int32}
        """

    static let rows: SQL = "SELECT coalesce(string_agg(t::text, '|' ORDER BY t._pk), '') AS v FROM stock.item AS t"

    /// Stock 1 on both servers, 90 items at the publisher (a third without a name), published
    /// by `publication`, subscribed to and caught up.
    static func withReplicatedStock(
        publication: SQL, stock1: String = itemVersion, stock2: String = backfillVersion, stock3: String? = nil,
        _ body: (_ publisher: PostgresContainer, _ subscriber: PostgresContainer, _ model: String, _ publishing: PostgresConnection, _ subscribing: PostgresConnection) throws -> Void
    ) throws {
        try Topology.withPublisherAndSubscriber { publisher, subscriber in
            try withTemporaryFolder { folder in
                let model = try writeModel(in: folder, stock1: stock1, stock2: stock2, stock3: stock3)
                for server in [publisher, subscriber] {
                    let create = try OrchestratorBinary.run(["apply", "--model", model, "--to", "Stock 1", "--store", "stock"], databaseURL: server.url())
                    try #require(create.exitCode == 0, "\(create)")
                }
                let publishing = try PostgresConnection(url: publisher.url())
                defer { publishing.close() }
                try publishing.execute("""
                    INSERT INTO stock.item (name, sku, price) SELECT CASE WHEN i % 3 = 0 THEN NULL ELSE 'item ' || i END, 'sku ' || i, i FROM generate_series(1, 90) AS i
                    """)
                try publishing.execute(publication)
                let subscribing = try PostgresConnection(url: subscriber.url())
                defer { subscribing.close() }
                let conninfo = try Topology.subscriptionConnection(to: publisher)
                try subscribing.execute(SQL(unsafeRaw: "CREATE SUBSCRIPTION stock CONNECTION \(quoteLiteral(conninfo)) PUBLICATION stock"))
                let first = try publishing.execute(rows).value(0, "v") ?? ""
                try #require(Topology.waitFor(first, query: rows.text, on: subscriber.url()) == first, "the subscriber never got the first rows")
                try #require(Topology.waitFor("0", query: "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')", on: subscriber.url()) == "0")
                try body(publisher, subscriber, model, publishing, subscribing)
                try subscribing.execute("DROP SUBSCRIPTION stock")
            }
        }
    }

    /// Both stores hold the same items (60 s at most), at Stock 2, the subscriber's with name
    /// NOT NULL and no sku; the subscription enabled and streaming.
    static func expectConvergedAtStock2(_ publishing: PostgresConnection, _ subscriber: PostgresContainer, _ subscribing: PostgresConnection) throws {
        let last = try publishing.execute(rows).value(0, "v") ?? ""
        #expect(Topology.waitFor(last, query: rows.text, on: subscriber.url()) == last, "rows committed at the publisher never reached the subscriber")
        let shape = try subscribing.execute("""
            SELECT (SELECT version_name FROM orchestrator.stores WHERE store = 'stock') AS version,
                   (SELECT attnotnull FROM pg_attribute WHERE attrelid = 'stock.item'::regclass AND attname = 'name') AS required,
                   (SELECT count(*) FROM pg_attribute WHERE attrelid = 'stock.item'::regclass AND attname = 'sku' AND NOT attisdropped) AS sku,
                   (SELECT count(*) FROM stock.item WHERE name = 'unnamed') AS backfilled,
                   (SELECT subenabled FROM pg_subscription WHERE subname = 'stock') AS enabled,
                   (SELECT count(pid) FROM pg_stat_subscription WHERE subname = 'stock') AS workers
            """)
        #expect(shape.value(0, "version") == "Stock 2")
        #expect(shape.bool(0, "required") == true)
        #expect(shape.int(0, "sku") == 0)
        // Each NULL name was backfilled once, by the publisher's UPDATE arriving through replication.
        #expect(shape.int(0, "backfilled") == 30)
        #expect(shape.bool(0, "enabled") == true)
        #expect(shape.int(0, "workers") == 1)
        #expect(try publishing.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'stock'").value(0, "version_name") == "Stock 2")
        // The backfill ran once, at the publisher: the subscriber's step has no UPDATE.
        try expectRanAtPublisherOnly("UPDATE", publishing, subscribing)
    }

    /// Stock 2's step wrote rows with `write` (an SQL keyword) at the publisher only: the
    /// subscriber's step, recorded in its history, has none, and drops a column.
    static func expectRanAtPublisherOnly(_ write: String, _ publishing: PostgresConnection, _ subscribing: PostgresConnection) throws {
        let ran: SQL = "SELECT statements::text AS s FROM orchestrator.migrations WHERE store = 'stock' AND to_version = 'Stock 2' AND outcome = 'succeeded'"
        #expect(try publishing.execute(ran).value(0, "s")?.contains(write) == true)
        let theirs = try subscribing.execute(ran).value(0, "s") ?? ""
        #expect(!theirs.contains(write) && theirs.contains("DROP COLUMN"), "\(theirs)")
    }

    @Test("a backfill replicates into the column the subscriber added first; the subscriber drops and tightens last; rows written during all arrive")
    func backfillWithWriters() throws {
        try Self.withReplicatedStock(publication: "CREATE PUBLICATION stock FOR TABLES IN SCHEMA stock") { publisher, subscriber, model, publishing, subscribing in
            let writer = TwinWriter.repeating(url: publisher.url(), "INSERT INTO stock.item (name, price) VALUES ('written during', 1)")
            let updater = TwinWriter.repeating(url: publisher.url(), "UPDATE stock.item SET price = price + 1 WHERE _pk = 7")
            let apply = try OrchestratorBinary.run(
                ["apply", "--model", model, "--store", "stock", "--allow-data-loss", "--subscriber", subscriber.url()], databaseURL: publisher.url()
            )
            let written = try writer.stopCounting()
            #expect(try updater.stopCounting() > 0)
            #expect(written > 0)
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(apply.stdoutLines.contains { $0.hasPrefix("subscriber ") && $0.contains(": store stock: now at 'Stock 2'") }, "\(apply)")
            try publishing.execute("INSERT INTO stock.item (name, price, note) SELECT 'after ' || i, i, 'n' FROM generate_series(1, 20) AS i")
            try publishing.execute("UPDATE stock.item SET note = 'set later' WHERE _pk <= 10")
            try Self.expectConvergedAtStock2(publishing, subscriber, subscribing)
            #expect(try subscribing.execute("SELECT count(*) AS n FROM stock.item WHERE name = 'written during'").int(0, "n") == Int64(written))
        }
    }

    @Test("a subscription that does not catch up stops the run at --subscriber-wait, before the subscriber drops anything; the same apply finishes it")
    func boundedWait() throws {
        try Self.withReplicatedStock(publication: "CREATE PUBLICATION stock FOR TABLE stock.item") { publisher, subscriber, model, publishing, subscribing in
            try subscribing.execute("ALTER SUBSCRIPTION stock DISABLE")
            #expect(Topology.waitFor("0", query: "SELECT count(pid) FROM pg_stat_subscription", on: subscriber.url()) == "0")
            let arguments = ["apply", "--model", model, "--store", "stock", "--allow-data-loss", "--subscriber", subscriber.url(), "--subscriber-wait", "3"]
            let stopped = try OrchestratorBinary.run(arguments, databaseURL: publisher.url())
            #expect(stopped.exitCode == 1, "\(stopped)")
            #expect(stopped.stderr.contains("waited 3 s (--subscriber-wait) for subscription stock of subscriber"), "\(stopped)")
            #expect(stopped.stderr.contains("run the same apply --subscriber"), "\(stopped)")
            #expect(!stopped.stderr.contains(subscriber.password))
            // The subscriber has the new column, still its sku and its version: nothing dropped.
            let shape = try subscribing.execute("""
                SELECT (SELECT version_name FROM orchestrator.stores WHERE store = 'stock') AS version,
                       (SELECT string_agg(attname::text, ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = 'stock.item'::regclass AND attnum > 0 AND NOT attisdropped) AS columns
                """)
            #expect(shape.value(0, "version") == "Stock 1")
            #expect(shape.value(0, "columns") == "_pk,_entity,name,sku,price,note")
            try publishing.execute("INSERT INTO stock.item (name, price, note) VALUES ('while stopped', 2, 'n')")
            try subscribing.execute("ALTER SUBSCRIPTION stock ENABLE")
            // An idle subscriber confirms its position every wal_receiver_status_interval (10 s).
            let started = Date()
            let finished = try OrchestratorBinary.run(Array(arguments.dropLast()) + ["60"], databaseURL: publisher.url())
            print("ReplicationBackfillTests: the finishing run took \(Date().timeIntervalSince(started)) s")
            #expect(finished.exitCode == 0, "\(finished)")
            try Self.expectConvergedAtStock2(publishing, subscriber, subscribing)
        }
    }
    @Test("the publisher's step failing (a lock held there, a short --lock-timeout) drops the columns the subscriber added first; its store shows no drift and keeps streaming")
    func publisherFailureTakesColumnsBack() throws {
        try Self.withReplicatedStock(publication: "CREATE PUBLICATION stock FOR TABLES IN SCHEMA stock") { publisher, subscriber, model, publishing, subscribing in
            let holder = try PostgresConnection(url: publisher.url())
            defer { holder.close() }
            try holder.execute("BEGIN")
            try holder.execute("LOCK TABLE stock.item IN ACCESS SHARE MODE")
            let apply = try OrchestratorBinary.run(
                ["apply", "--model", model, "--store", "stock", "--allow-data-loss", "--lock-timeout", "100", "--subscriber", subscriber.url()], databaseURL: publisher.url()
            )
            try holder.execute("ROLLBACK")
            #expect(apply.exitCode == 1, "\(apply)")
            #expect(apply.stderr.contains("The publisher's store stays at its version; subscriber "), "\(apply)")
            #expect(apply.stderr.contains(": dropped the step's new columns stock.item.note again (empty, added by this run)"), "\(apply)")
            #expect(!apply.stderr.contains(subscriber.password) && !apply.stderr.contains(publisher.password))
            let columns = "SELECT string_agg(attname::text, ',' ORDER BY attnum) AS c FROM pg_attribute WHERE attrelid = 'stock.item'::regclass AND attnum > 0 AND NOT attisdropped"
            for connection in [publishing, subscribing] {
                #expect(try connection.execute(SQL(unsafeRaw: columns)).value(0, "c") == "_pk,_entity,name,sku,price")
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'stock'").value(0, "version_name") == "Stock 1")
            }
            let status = try OrchestratorBinary.run(["status", "--model", model, "--store", "stock"], databaseURL: subscriber.url())
            #expect(status.stdoutLines.contains("drift: none from the contract of 'Stock 1'"), "\(status)")
            try publishing.execute("INSERT INTO stock.item (name, sku, price) VALUES ('after the failure', 's', 3)")
            let last = try publishing.execute(Self.rows).value(0, "v") ?? ""
            #expect(Topology.waitFor(last, query: Self.rows.text, on: subscriber.url()) == last, "rows written after the failed run never reached the subscriber")
            let finished = try OrchestratorBinary.run(["apply", "--model", model, "--store", "stock", "--allow-data-loss", "--subscriber", subscriber.url()], databaseURL: publisher.url())
            #expect(finished.exitCode == 0, "\(finished)")
            try Self.expectConvergedAtStock2(publishing, subscriber, subscribing)
        }
    }

    @Test("the same step under --online is refused with replicationDataWrites, nothing changed on either side")
    func onlineRefused() throws {
        try Self.withReplicatedStock(publication: "CREATE PUBLICATION stock FOR TABLES IN SCHEMA stock") { publisher, subscriber, model, publishing, subscribing in
            let apply = try OrchestratorBinary.run(
                ["apply", "--model", model, "--store", "stock", "--allow-data-loss", "--online", "--subscriber", subscriber.url()], databaseURL: publisher.url()
            )
            #expect(apply.exitCode == 1, "\(apply)")
            #expect(apply.stderr.contains("(replicationDataWrites)") && apply.stderr.contains("Nothing was changed"), "\(apply)")
            let columns = "SELECT string_agg(attname::text, ',' ORDER BY attnum) AS c FROM pg_attribute WHERE attrelid = 'stock.item'::regclass AND attnum > 0 AND NOT attisdropped"
            for connection in [publishing, subscribing] {
                #expect(try connection.execute(SQL(unsafeRaw: columns)).value(0, "c") == "_pk,_entity,name,sku,price")
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'stock'").value(0, "version_name") == "Stock 1")
            }
            #expect(try subscribing.execute("SELECT subenabled FROM pg_subscription WHERE subname = 'stock'").bool(0, "subenabled") == true)
        }
    }
}
