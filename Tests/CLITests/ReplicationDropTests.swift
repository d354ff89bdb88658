import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 24's third failure: every drop of a published column under `apply --subscriber` keeps
/// replication flowing while the application writes at the publisher: a plan of several steps
/// (each step in the backfill order in turn), `--online`, and a drop beside a rename (refused
/// unless `--allow-unordered-drop`).
@Suite("apply --subscriber: drops of published columns with writers at the publisher", .serialized, containers)
struct ReplicationDropTests {
    /// Stock 2: sku dropped, code new; Stock 3: code dropped. Dropping loses data, so the plan
    /// from Stock 1 is two steps (`LightweightPath`).
    static let dropSkuAddCode = """
        entities:
          Item:
            attributes:
              name: {type: string}
              price: {type: int32}
              code: {type: string}
        """
    static let dropCode = """
        entities:
          Item:
            attributes:
              name: {type: string}
              price: {type: int32}
        """

    static let columns: SQL = """
        SELECT string_agg(attname::text, ',' ORDER BY attnum) AS c FROM pg_attribute WHERE attrelid = 'stock.item'::regclass AND attnum > 0 AND NOT attisdropped
        """

    /// `arguments` run against the publisher while a writer inserts there throughout; then both
    /// stores at `version` with `columns`, identical rows (every row written during and after
    /// included), the subscription enabled and streaming.
    static func applyWithWriter(
        _ arguments: [String], stock2: String, stock3: String? = nil, publication: SQL = "CREATE PUBLICATION stock FOR TABLES IN SCHEMA stock",
        version: String, columns expected: String
    ) throws {
        try ReplicationBackfillTests.withReplicatedStock(publication: publication, stock2: stock2, stock3: stock3) { publisher, subscriber, model, publishing, subscribing in
            let writer = TwinWriter.repeating(url: publisher.url(), "INSERT INTO stock.item (name, price) VALUES ('written during', 1)")
            let apply = try OrchestratorBinary.run(
                ["apply", "--model", model, "--store", "stock", "--allow-data-loss", "--subscriber", subscriber.url()] + arguments, databaseURL: publisher.url()
            )
            let written = try writer.stopCounting()
            #expect(written > 0)
            #expect(apply.exitCode == 0, "\(apply)")
            try publishing.execute("INSERT INTO stock.item (name, price) SELECT 'after ' || i, i FROM generate_series(1, 20) AS i")
            let last = try publishing.execute(ReplicationBackfillTests.rows).value(0, "v") ?? ""
            #expect(Topology.waitFor(last, query: ReplicationBackfillTests.rows.text, on: subscriber.url()) == last, "rows committed at the publisher never reached the subscriber")
            for connection in [publishing, subscribing] {
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'stock'").value(0, "version_name") == version)
                #expect(try connection.execute(columns).value(0, "c") == expected)
            }
            let state = try subscribing.execute("""
                SELECT (SELECT count(*) FROM stock.item WHERE name = 'written during') AS during,
                       (SELECT subenabled FROM pg_subscription WHERE subname = 'stock') AS enabled,
                       (SELECT count(pid) FROM pg_stat_subscription WHERE subname = 'stock') AS workers
                """)
            #expect(state.int(0, "during") == Int64(written))
            #expect(state.bool(0, "enabled") == true)
            #expect(state.int(0, "workers") == 1)
        }
    }

    @Test("a step that only drops a published column: the subscriber drops it once the rows written before arrived; every row arrives, the subscription streams")
    func oneStep() throws {
        try Self.applyWithWriter([], stock2: ReplicationBackfillTests.dropVersion, version: "Stock 2", columns: "_pk,_entity,name,price")
    }

    @Test("a plan of two steps, each dropping a published column: each step goes the backfill order in turn; every row arrives")
    func severalSteps() throws {
        try Self.applyWithWriter([], stock2: Self.dropSkuAddCode, stock3: Self.dropCode, version: "Stock 3", columns: "_pk,_entity,name,price")
    }

    @Test("a plan of two steps, the first a backfill of published rows (refused before as several steps), the second a drop: each step in the backfill order; every row arrives")
    func backfillThenDrop() throws {
        let dropNote = """
            entities:
              Item:
                attributes:
                  name: {type: string, optional: false, default: unnamed}
                  price: {type: int32}
            """
        try Self.applyWithWriter([], stock2: ReplicationBackfillTests.backfillVersion, stock3: dropNote, version: "Stock 3", columns: "_pk,_entity,name,price")
    }

    @Test("a step dropping a published column under --online: the publisher's step online, the subscriber drops once the rows written before arrived")
    func online() throws {
        try Self.applyWithWriter(["--online"], stock2: ReplicationBackfillTests.dropVersion, publication: "CREATE PUBLICATION stock FOR TABLE stock.item", version: "Stock 2", columns: "_pk,_entity,name,price")
    }

    @Test("a plan of two steps stopped at its first wait (--subscriber-wait) is finished by the same apply: the subscriber a step behind its publisher catches up one step at a time")
    func severalStepsFinishedByARerun() throws {
        try ReplicationBackfillTests.withReplicatedStock(publication: "CREATE PUBLICATION stock FOR TABLE stock.item", stock2: Self.dropSkuAddCode, stock3: Self.dropCode) { publisher, subscriber, model, publishing, subscribing in
            try subscribing.execute("ALTER SUBSCRIPTION stock DISABLE")
            #expect(Topology.waitFor("0", query: "SELECT count(pid) FROM pg_stat_subscription", on: subscriber.url()) == "0")
            let arguments = ["apply", "--model", model, "--store", "stock", "--allow-data-loss", "--subscriber", subscriber.url(), "--subscriber-wait"]
            let stopped = try OrchestratorBinary.run(arguments + ["3"], databaseURL: publisher.url())
            #expect(stopped.exitCode == 1, "\(stopped)")
            #expect(stopped.stderr.contains("waited 3 s (--subscriber-wait) for subscription stock of subscriber"), "\(stopped)")
            let versions = "SELECT version_name FROM orchestrator.stores WHERE store = 'stock'"
            #expect(try publishing.execute(SQL(unsafeRaw: versions)).value(0, "version_name") == "Stock 2")
            #expect(try subscribing.execute(SQL(unsafeRaw: versions)).value(0, "version_name") == "Stock 1")
            #expect(try subscribing.execute(Self.columns).value(0, "c") == "_pk,_entity,name,sku,price,code")
            try publishing.execute("INSERT INTO stock.item (name, price, code) VALUES ('while stopped', 2, 'c')")
            try subscribing.execute("ALTER SUBSCRIPTION stock ENABLE")
            let finished = try OrchestratorBinary.run(arguments + ["60"], databaseURL: publisher.url())
            #expect(finished.exitCode == 0, "\(finished)")
            let last = try publishing.execute(ReplicationBackfillTests.rows).value(0, "v") ?? ""
            #expect(Topology.waitFor(last, query: ReplicationBackfillTests.rows.text, on: subscriber.url()) == last, "rows committed at the publisher never reached the subscriber")
            for connection in [publishing, subscribing] {
                #expect(try connection.execute(SQL(unsafeRaw: versions)).value(0, "version_name") == "Stock 3")
                #expect(try connection.execute(Self.columns).value(0, "c") == "_pk,_entity,name,price")
            }
        }
    }

    @Test("a drop beside a rename is refused with replicationUnorderedDrop, nothing changed on either side; --allow-unordered-drop runs it")
    func besideARenameNeedsConsent() throws {
        let renamed = """
            entities:
              Item:
                attributes:
                  title: {type: string, renamingIdentifier: name}
                  price: {type: int32}
            """
        try ReplicationBackfillTests.withReplicatedStock(publication: "CREATE PUBLICATION stock FOR TABLES IN SCHEMA stock", stock2: renamed) { publisher, subscriber, model, publishing, subscribing in
            let arguments = ["apply", "--model", model, "--store", "stock", "--allow-data-loss", "--subscriber", subscriber.url()]
            let plan = try OrchestratorBinary.run(["plan", "--model", model, "--store", "stock"], databaseURL: publisher.url())
            #expect(plan.stdout.contains("replicationUnorderedDrop"), "\(plan)")
            let refused = try OrchestratorBinary.run(arguments, databaseURL: publisher.url())
            #expect(refused.exitCode == 1, "\(refused)")
            #expect(refused.stderr.contains("(replicationUnorderedDrop) ") && refused.stderr.contains("Nothing was changed"), "\(refused)")
            #expect(!refused.stderr.contains(subscriber.password))
            for connection in [publishing, subscribing] {
                #expect(try connection.execute(Self.columns).value(0, "c") == "_pk,_entity,name,sku,price")
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'stock'").value(0, "version_name") == "Stock 1")
            }
            #expect(try subscribing.execute("SELECT subenabled FROM pg_subscription WHERE subname = 'stock'").bool(0, "subenabled") == true)
            let consented = try OrchestratorBinary.run(arguments + ["--allow-unordered-drop"], databaseURL: publisher.url())
            #expect(consented.exitCode == 0, "\(consented)")
            try publishing.execute("INSERT INTO stock.item (title, price) VALUES ('after', 5)")
            let last = try publishing.execute(ReplicationBackfillTests.rows).value(0, "v") ?? ""
            #expect(Topology.waitFor(last, query: ReplicationBackfillTests.rows.text, on: subscriber.url()) == last, "rows committed at the publisher never reached the subscriber")
        }
    }
}
