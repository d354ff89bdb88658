import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 24, section 3: a to-one made to-many (a join table created, filled from the to-one's
/// column, the column dropped) under `apply --subscriber`, with a writer at the publisher the
/// whole run: the subscriber creates the join table first, the publisher creates it first too
/// and each subscription learns it while empty, the publisher's fill replicates (the subscriber
/// never runs it), the subscriber drops the column last.
@Suite("apply --subscriber: a to-one made to-many with writers at the publisher", .serialized, containers)
struct ReplicationJoinTableTests {
    /// Stock 1's Item with a tag, a to-one (`tag_pk`), or a to-many, many-to-many with Tag's
    /// items (a join table).
    static func model(tagToMany: Bool) -> String {
        ReplicationBackfillTests.itemVersion + """

                relationships:
                  tag: {destination: Tag, inverse: items\(tagToMany ? ", toMany: true" : ", deleteRule: nullify")}
              Tag:
                attributes:
                  label: {type: string}
                relationships:
                  items: {destination: Item, inverse: tag, toMany: true}
            """
    }

    /// An item linked to the first tag, in whichever shape the store has when the item's row
    /// is locked: the to-one's column (`apply --online`'s trigger mirrors it into the join
    /// table), or a row of the join table once the column is gone.
    static let linkEitherShape: SQL = """
        DO $$
        DECLARE new_item bigint; first_tag bigint := (SELECT min(_pk) FROM stock.tag);
        BEGIN
            INSERT INTO stock.item (name, price) VALUES ('linked during', 3) RETURNING _pk INTO new_item;
            IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'stock.item'::regclass AND attname = 'tag_pk' AND NOT attisdropped) THEN
                EXECUTE 'UPDATE stock.item SET tag_pk = $2 WHERE _pk = $1' USING new_item, first_tag;
            ELSE
                EXECUTE 'INSERT INTO stock.item__tag (item_pk, tag_pk) VALUES ($1, $2)' USING new_item, first_tag;
            END IF;
        END $$
        """

    static func rows(of table: String) -> SQL {
        "SELECT coalesce(string_agg(t::text, '|' ORDER BY t::text), '') AS v FROM \(ident: "stock", table) AS t"
    }

    /// The join table's name: the store's one table that is neither item nor tag.
    static func joinTable(on connection: PostgresConnection) throws -> String {
        try connection.execute("""
            SELECT string_agg(relname::text, ',') AS t FROM pg_class WHERE relnamespace = 'stock'::regnamespace AND relkind = 'r' AND relname NOT IN ('item', 'tag')
            """).value(0, "t") ?? ""
    }

    /// Stock 1 with 4 tags and a tag on two items of three, published by `publication`; the
    /// apply with a writer inserting items at the publisher throughout; then links written at
    /// the publisher in the new shape. Both stores at Stock 2 with identical items, tags and
    /// links, every row written during and after arrived, the subscription streaming, and the
    /// fill run by the publisher only.
    static func applyWithWriter(publication: SQL, _ arguments: [String] = []) throws {
        try ReplicationBackfillTests.withReplicatedStock(publication: publication, stock1: model(tagToMany: false), stock2: model(tagToMany: true)) { publisher, subscriber, model, publishing, subscribing in
            try publishing.execute("INSERT INTO stock.tag (_entity, label) SELECT 'Tag', 'tag ' || i FROM generate_series(1, 4) AS i")
            try publishing.execute("UPDATE stock.item SET tag_pk = (SELECT min(_pk) FROM stock.tag) + _pk % 4 WHERE _pk % 3 <> 0")
            let seeded = try publishing.execute(ReplicationBackfillTests.rows).value(0, "v") ?? ""
            try #require(Topology.waitFor(seeded, query: ReplicationBackfillTests.rows.text, on: subscriber.url()) == seeded, "the subscriber never got the links")
            let plan = try OrchestratorBinary.run(["plan", "--model", model, "--store", "stock"] + arguments, databaseURL: publisher.url())
            #expect(plan.stdout.contains("replicationColumnsDroppedLast") && !plan.stdout.contains("replicationUnorderedDrop"), "\(plan)")
            let writer = TwinWriter.repeating(url: publisher.url(), "INSERT INTO stock.item (name, price) VALUES ('written during', 1)")
            // Offline, a link written between the step's copy and its drop would be lost at the publisher itself (no replication involved): linked under --online only.
            let linker = arguments.contains("--online") ? TwinWriter.repeating(url: publisher.url(), linkEitherShape, every: 0.02) : nil
            let apply = try OrchestratorBinary.run(
                ["apply", "--model", model, "--store", "stock", "--allow-data-loss", "--subscriber", subscriber.url()] + arguments, databaseURL: publisher.url()
            )
            let written = try writer.stopCounting()
            #expect(written > 0)
            let linked = try linker?.stopCounting() ?? 0
            #expect(linker == nil || linked > 0)
            #expect(apply.exitCode == 0, "\(apply)")
            let join = try joinTable(on: publishing)
            try #require(!join.isEmpty && !join.contains(","), "\(join)")
            #expect(try publishing.execute("SELECT count(*) AS n FROM \(ident: "stock", join)").int(0, "n") == 60 + Int64(linked))
            try publishing.execute("INSERT INTO stock.item (name, price) SELECT 'after ' || i, i FROM generate_series(1, 20) AS i")
            try publishing.execute("""
                INSERT INTO \(ident: "stock", join) SELECT i._pk, t._pk FROM stock.item i CROSS JOIN stock.tag t WHERE i.name LIKE 'after %' AND t.label = 'tag 2'
                """)
            for query in [ReplicationBackfillTests.rows, rows(of: join), rows(of: "tag")] {
                let last = try publishing.execute(query).value(0, "v") ?? ""
                #expect(Topology.waitFor(last, query: query.text, on: subscriber.url()) == last, "rows committed at the publisher never reached the subscriber: \(query.text)")
            }
            for connection in [publishing, subscribing] {
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'stock'").value(0, "version_name") == "Stock 2")
                #expect(try connection.execute(ReplicationDropTests.columns).value(0, "c") == "_pk,_entity,name,sku,price")
                #expect(try joinTable(on: connection) == join)
            }
            let state = try subscribing.execute("""
                SELECT (SELECT count(*) FROM stock.item WHERE name = 'written during') AS during,
                       (SELECT count(*) FROM \(ident: "stock", join)) AS links,
                       (SELECT subenabled FROM pg_subscription WHERE subname = 'stock') AS enabled,
                       (SELECT count(pid) FROM pg_stat_subscription WHERE subname = 'stock') AS workers
                """)
            #expect(state.int(0, "during") == Int64(written))
            #expect(state.int(0, "links") == 80 + Int64(linked))
            #expect(state.bool(0, "enabled") == true)
            #expect(state.int(0, "workers") == 1)
            // The fill ran once, at the publisher: the subscriber's step has no INSERT.
            try ReplicationBackfillTests.expectRanAtPublisherOnly("INSERT INTO", publishing, subscribing)
        }
    }

    @Test("FOR TABLES IN SCHEMA: the join table's rows replicate once, the column goes last; every row written during and after arrives")
    func tablesInSchema() throws {
        try Self.applyWithWriter(publication: "CREATE PUBLICATION stock FOR TABLES IN SCHEMA stock")
    }

    @Test("FOR TABLE item, tag: the publisher's step adds the join table to the publication; every row and link arrives")
    func tableList() throws {
        try Self.applyWithWriter(publication: "CREATE PUBLICATION stock FOR TABLE stock.item, stock.tag")
    }

    @Test("--online, FOR TABLES IN SCHEMA: the publisher's step online (its trigger's and batches' links replicate), the subscriber's parts in place; every row and link arrives")
    func online() throws {
        try Self.applyWithWriter(publication: "CREATE PUBLICATION stock FOR TABLES IN SCHEMA stock", ["--online"])
    }

    @Test("the publisher's step failing after the join table was created first and learned (a lock held on item, a short --lock-timeout): the empty table is dropped again on both sides, no drift, replication flows, and the same apply then finishes")
    func publisherFailureTakesTheTableBack() throws {
        try ReplicationBackfillTests.withReplicatedStock(
            publication: "CREATE PUBLICATION stock FOR TABLE stock.item, stock.tag", stock1: Self.model(tagToMany: false), stock2: Self.model(tagToMany: true)
        ) { publisher, subscriber, model, publishing, subscribing in
            let holder = try PostgresConnection(url: publisher.url())
            defer { holder.close() }
            try holder.execute("BEGIN")
            try holder.execute("LOCK TABLE stock.item IN ACCESS SHARE MODE")
            let arguments = ["apply", "--model", model, "--store", "stock", "--allow-data-loss", "--subscriber", subscriber.url()]
            let apply = try OrchestratorBinary.run(arguments + ["--lock-timeout", "100"], databaseURL: publisher.url())
            try holder.execute("ROLLBACK")
            #expect(apply.exitCode == 1, "\(apply)")
            #expect(apply.stderr.contains(": dropped the step's new tables stock.item__tag again (empty, added by this run); the publisher: dropped the step's new tables stock.item__tag again"), "\(apply)")
            #expect(!apply.stderr.contains(subscriber.password) && !apply.stderr.contains(publisher.password))
            for (connection, url) in [(publishing, publisher.url()), (subscribing, subscriber.url())] {
                #expect(try Self.joinTable(on: connection) == "")
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'stock'").value(0, "version_name") == "Stock 1")
                let status = try OrchestratorBinary.run(["status", "--model", model, "--store", "stock"], databaseURL: url)
                #expect(status.stdoutLines.contains("drift: none from the contract of 'Stock 1'"), "\(status)")
            }
            #expect(try publishing.execute("SELECT string_agg(tablename::text, ',' ORDER BY tablename) AS t FROM pg_publication_tables WHERE pubname = 'stock'").value(0, "t") == "item,tag")
            try publishing.execute("INSERT INTO stock.item (name, price) VALUES ('after the failure', 3)")
            let last = try publishing.execute(ReplicationBackfillTests.rows).value(0, "v") ?? ""
            #expect(Topology.waitFor(last, query: ReplicationBackfillTests.rows.text, on: subscriber.url()) == last, "rows written after the failed run never reached the subscriber")
            let finished = try OrchestratorBinary.run(arguments, databaseURL: publisher.url())
            #expect(finished.exitCode == 0, "\(finished)")
            try publishing.execute("INSERT INTO stock.item__tag SELECT i._pk, t._pk FROM stock.item i CROSS JOIN stock.tag t WHERE i.name = 'after the failure'")
            for query in [ReplicationBackfillTests.rows, Self.rows(of: "item__tag")] {
                let last = try publishing.execute(query).value(0, "v") ?? ""
                #expect(Topology.waitFor(last, query: query.text, on: subscriber.url()) == last, "rows committed at the publisher never reached the subscriber: \(query.text)")
            }
        }
    }

    @Test("a subscription left disabled cannot learn the join table (PostgreSQL refuses REFRESH PUBLICATION on it): the run stops before the publisher's step, the empty tables taken back; enabled, the same apply finishes")
    func disabledSubscriptionStopsBeforeThePublisher() throws {
        try ReplicationBackfillTests.withReplicatedStock(
            publication: "CREATE PUBLICATION stock FOR TABLES IN SCHEMA stock", stock1: Self.model(tagToMany: false), stock2: Self.model(tagToMany: true)
        ) { publisher, subscriber, model, publishing, subscribing in
            try publishing.execute("INSERT INTO stock.tag (_entity, label) VALUES ('Tag', 'only')")
            try publishing.execute("UPDATE stock.item SET tag_pk = (SELECT _pk FROM stock.tag) WHERE _pk % 2 = 0")
            let linked = try publishing.execute(ReplicationBackfillTests.rows).value(0, "v") ?? ""
            try #require(Topology.waitFor(linked, query: ReplicationBackfillTests.rows.text, on: subscriber.url()) == linked)
            try subscribing.execute("ALTER SUBSCRIPTION stock DISABLE")
            let arguments = ["apply", "--model", model, "--store", "stock", "--allow-data-loss", "--subscriber", subscriber.url()]
            let stopped = try OrchestratorBinary.run(arguments, databaseURL: publisher.url())
            #expect(stopped.exitCode == 1, "\(stopped)")
            #expect(stopped.stderr.contains("REFRESH") && stopped.stderr.contains("dropped the step's new tables stock.item__tag again"), "\(stopped)")
            for connection in [publishing, subscribing] {
                #expect(try Self.joinTable(on: connection) == "")
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'stock'").value(0, "version_name") == "Stock 1")
            }
            try subscribing.execute("ALTER SUBSCRIPTION stock ENABLE")
            let finished = try OrchestratorBinary.run(arguments, databaseURL: publisher.url())
            #expect(finished.exitCode == 0, "\(finished)")
            let last = try publishing.execute(Self.rows(of: "item__tag")).value(0, "v") ?? ""
            #expect(!last.isEmpty && Topology.waitFor(last, query: Self.rows(of: "item__tag").text, on: subscriber.url()) == last)
        }
    }
}
