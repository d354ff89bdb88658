import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 24 item 4: `apply --max-slot-lag` (and `--slot`) on a real server with
/// `wal_level=logical`, where a logical slot nobody consumes stays behind until the test
/// advances it (`pg_replication_slot_advance`), as a CDC consumer would; and slots that are not
/// the store's.
@Suite("Throttling on a logical slot", .serialized, containers)
struct SlotThrottleTests {
    static let added: Int64 = 6000
    static let version = "SELECT version_name FROM orchestrator.stores WHERE store = 'recipes'"
    static let checked = "SELECT count(*) AS n FROM recipes.recipe WHERE rating = 0"

    /// The bench store at Bench 1 with `added` more recipes to backfill, on a server with
    /// `wal_level=logical` and a logical slot `cdc` made after them.
    static func withSlotBehind(_ body: (_ server: PostgresContainer, _ connection: PostgresConnection) throws -> Void) throws {
        try Topology.withServer(settings: ["wal_level": "logical"]) { server in
            let url = server.url()
            try Pipeline.benchAtVersionOne(url)
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try connection.execute("INSERT INTO recipes.recipe (name, rating, chef_pk, cuisine_pk) SELECT 'added ' || g, NULL, 1, 1 FROM generate_series(1, \(Self.added)) g")
            try connection.execute("SELECT pg_create_logical_replication_slot('cdc', 'test_decoding')")
            try body(server, connection)
        }
    }

    @Test("a backfill waits while a logical slot is behind, stops after --throttle-timeout, and finishes once the slot is consumed")
    func backfillWaitsForTheSlot() throws {
        try Self.withSlotBehind { server, connection in
            let url = server.url()
            let arguments = [
                "apply", "--online", "--batch-size", "5", "--max-slot-lag", "32768", "--slot", "cdc", "--model", "bench/model", "--store", "recipes",
            ]
            let stopped = try OrchestratorBinary.run(arguments + ["--throttle-timeout", "2"], databaseURL: url)
            #expect(stopped.exitCode == 1, "\(stopped)")
            #expect(stopped.stdoutLines.contains { $0.contains("throttled: logical slot cdc is ") && $0.contains(" bytes behind (--max-slot-lag 32768)") }, "\(stopped)")
            #expect(stopped.stderr.contains("for longer than --throttle-timeout (2 s)"), "\(stopped)")
            #expect(stopped.stderr.contains("apply again continues"), "\(stopped)")
            #expect(try connection.execute(SQL(unsafeRaw: Self.version)).value(0, "version_name") == "Bench 1")
            let checkedBefore = try connection.execute(SQL(unsafeRaw: Self.checked)).int(0, "n") ?? -1
            #expect(checkedBefore < Self.added + 4)

            // Again, with the default timeout: it waits, then finishes once a consumer reads the slot.
            let running = try RunningOrchestrator(arguments + ["--format", "json"], databaseURL: url)
            // Once it says it is throttled, no batch runs while the slot stays behind.
            #expect(running.waitForOutput(containing: "throttled: logical slot cdc is "), "the second run never said it waits for the slot")
            let waiting = try connection.execute(SQL(unsafeRaw: Self.checked)).int(0, "n")
            Thread.sleep(forTimeInterval: 3)
            #expect(running.isRunning)
            #expect(try connection.execute(SQL(unsafeRaw: Self.checked)).int(0, "n") == waiting, "a batch ran while the slot was behind")
            let consumer = TwinWriter.repeating(url: url, "SELECT pg_replication_slot_advance('cdc', pg_current_wal_lsn())")
            let finished = try running.finish()
            _ = try consumer.stopCounting()
            #expect(finished.exitCode == 0, "\(finished)")
            #expect(finished.stdoutLines.contains { $0.contains(#""event":"paused""#) && $0.contains("throttled: logical slot cdc is ") }, "\(finished)")
            #expect(try connection.execute(SQL(unsafeRaw: Self.checked)).int(0, "n") == Self.added + 4)
            #expect(try connection.execute(SQL(unsafeRaw: Self.version)).value(0, "version_name") == "Bench 2")
        }
    }

    @Test("--slot naming no slot, a physical slot or another database's slot: a clear error, nothing changed")
    func aSlotThatIsNotTheStores() throws {
        try Self.withSlotBehind { server, connection in
            try connection.execute("SELECT pg_create_physical_replication_slot('standby1')")
            try connection.execute("CREATE DATABASE elsewhere")
            let elsewhere = try PostgresConnection(url: server.url(database: "elsewhere"))
            try elsewhere.execute("SELECT pg_create_logical_replication_slot('theirs', 'test_decoding')")
            elsewhere.close()
            let cases = [("nosuch", "no replication slot of this server"), ("standby1", "a physical slot"), ("theirs", "a slot of database elsewhere")]
            for (slot, what) in cases {
                let run = try OrchestratorBinary.run(
                    ["apply", "--online", "--max-slot-lag", "1000000", "--slot", "cdc", "--slot", slot, "--model", "bench/model", "--store", "recipes"],
                    databaseURL: server.url()
                )
                #expect(run.exitCode == 1, "\(run)")
                #expect(run.stderr.contains("--slot \(slot): \(what)"), "\(run)")
                #expect(run.stderr.contains("not a logical slot of the store's database (its logical slots: cdc); nothing was changed"), "\(run)")
            }
            #expect(try connection.execute(SQL(unsafeRaw: Self.version)).value(0, "version_name") == "Bench 1")
            #expect(try connection.execute(SQL(unsafeRaw: Self.checked)).int(0, "n") == 0)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname LIKE 'recipes%'").int(0, "n") == 1)
        }
    }

    @Test("apply --subscriber: a subscription reading a slot that is not on the publisher is a clear error, nothing changed")
    func aSubscriptionSlotElsewhere() throws {
        try ReplicationTests.withReplicatedKitchen(.tablesInSchema) { publisher, subscriber, folder, publishing, subscribing in
            try subscribing.execute("ALTER SUBSCRIPTION kitchen DISABLE")
            try subscribing.execute("ALTER SUBSCRIPTION kitchen SET (slot_name = 'elsewhere')")
            let run = try OrchestratorBinary.run(["apply", "--model", folder.path, "--subscriber", subscriber.url()], databaseURL: publisher.url())
            #expect(run.exitCode == 1, "\(run)")
            #expect(run.stderr.contains("subscription kitchen reads slot 'elsewhere', which is not a slot of this publisher's database; nothing was changed"), "\(run)")
            #expect(try publishing.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 1")
            try subscribing.execute("ALTER SUBSCRIPTION kitchen SET (slot_name = 'kitchen')")
        }
    }
}
