import Foundation
import PostgresClient
import Testing
import TestSupport

/// Issue 24 item 4: `apply --max-replica-lag`/`--throttle-timeout` on a real primary and
/// streaming standby, whose replay the test pauses (`pg_wal_replay_pause()`).
@Suite("Throttling on a standby's replay", .serialized, containers)
struct ThrottleTests {
    static let added: Int64 = 6000

    @Test("a backfill waits while the standby's replay is paused, stops after --throttle-timeout, and finishes once replay resumes")
    func backfillWaitsForTheStandby() throws {
        try Topology.withPrimaryAndStandby { primary, standby in
            let url = try primary.url()
            try Pipeline.benchAtVersionOne(url)
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try connection.execute("INSERT INTO recipes.recipe (name, rating, chef_pk, cuisine_pk) SELECT 'added ' || g, NULL, 1, 1 FROM generate_series(1, \(Self.added)) g")
            #expect(Topology.waitFor("\(Self.added + 9)", query: "SELECT count(*) FROM recipes.recipe", on: try standby.url()) == "\(Self.added + 9)")
            let standbyConnection = try PostgresConnection(url: try standby.url())
            defer { standbyConnection.close() }
            try standbyConnection.execute("SELECT pg_wal_replay_pause()")

            let arguments = ["apply", "--online", "--batch-size", "5", "--max-replica-lag", "1", "--model", "bench/model", "--store", "recipes"]
            let stopped = try OrchestratorBinary.run(arguments + ["--throttle-timeout", "2"], databaseURL: url)
            #expect(stopped.exitCode == 1, "\(stopped)")
            #expect(stopped.stdoutLines.contains { $0.contains("throttled: standby ") }, "\(stopped)")
            #expect(stopped.stderr.contains("for longer than --throttle-timeout (2 s)"), "\(stopped)")
            #expect(stopped.stderr.contains("apply again continues"), "\(stopped)")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'recipes'").value(0, "version_name") == "Bench 1")
            let checkedBefore = try connection.execute("SELECT count(*) AS n FROM recipes.recipe WHERE rating = 0").int(0, "n") ?? -1
            #expect(checkedBefore < Self.added + 4)

            // Again, with the default timeout: it waits, then finishes once replay resumes.
            let running = try RunningOrchestrator(arguments + ["--format", "json"], databaseURL: url)
            Thread.sleep(forTimeInterval: 5)
            #expect(running.isRunning)
            try standbyConnection.execute("SELECT pg_wal_replay_resume()")
            let finished = try running.finish()
            #expect(finished.exitCode == 0, "\(finished)")
            #expect(finished.stdoutLines.contains { $0.contains(#""event":"paused""#) && $0.contains("throttled: standby ") }, "\(finished)")
            #expect(try connection.execute("SELECT count(*) AS n FROM recipes.recipe WHERE rating = 0").int(0, "n") == Self.added + 4)
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'recipes'").value(0, "version_name") == "Bench 2")
        }
    }
}

@Suite struct ThrottleOptionTests {
    @Test(arguments: [
        (["apply", "--max-replica-lag", "soon", "--model", "bench/model"], "--max-replica-lag must be a positive duration"),
        (["apply", "--max-slot-lag", "0", "--model", "bench/model"], "--max-slot-lag must be a positive number of bytes"),
        (["apply", "--throttle-timeout", "0", "--model", "bench/model"], "--throttle-timeout must be a positive duration"),
        (["apply", "--slot", "cdc", "--model", "bench/model"], "--slot names the slots --max-slot-lag watches: give --max-slot-lag too"),
    ])
    func aBadLimitIsAUsageError(arguments: [String], message: String) throws {
        let result = try OrchestratorBinary.run(arguments, databaseURL: "postgres://nowhere.invalid/db")
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.contains(message), "\(result)")
    }
}
