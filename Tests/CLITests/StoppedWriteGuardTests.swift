import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 20.5: a heavyweight apply stopped (SIGSTOP: a paused VM, a stopped container) while
/// its write guard holds SHARE locks blocks writers only until PostgreSQL ends the guard's
/// session (`--idle-timeout`); the step then fails, and the next apply goes on as after a crash.
@Suite("Stopped write guard")
struct StoppedWriteGuardTests {
    /// The pid of the session holding the write guard's SHARE lock on `kitchen.recipe`, if any.
    static func guardPid(on connection: PostgresConnection) throws -> Int? {
        let result = try connection.execute("""
            SELECT l.pid FROM pg_locks l WHERE l.relation = 'kitchen.recipe'::regclass AND l.mode = 'ShareLock' AND l.granted
            """)
        return result.isEmpty ? nil : result.int(0, "pid").map(Int.init)
    }

    @Test("writers go on after --idle-timeout while apply is stopped in the write guard; the step fails and a later apply finishes with every row", integration)
    func stoppedInWriteGuard() throws {
        try withAppliedStore { folder, url, connection in
            try connection.execute("INSERT INTO kitchen.chef (name) SELECT 'chef ' || i FROM generate_series(1, 200) AS i")
            try connection.execute("""
                INSERT INTO kitchen.recipe (name, temperature, amount, chef_pk)
                SELECT 'recipe ' || i, 300 + i % 100, i % 1000, 1 + i % 200 FROM generate_series(1, 100000) AS i
                """)
            // Streaming, so the passes under the guard take long enough to be stopped in.
            let arguments = ["apply", "--model", folder.path, "--streaming", "--idle-timeout", "1500"]
            let first = try RunningOrchestrator(arguments, databaseURL: url)
            let deadline = Date().addingTimeInterval(120)
            // Stopped once two passes have committed (the recipes' stage 1 runs then), as the
            // kill-and-resume test is killed.
            var guardPid: Int?
            var checkpoints = 0
            while first.isRunning && (guardPid == nil || checkpoints < 2) && Date() < deadline {
                checkpoints = (try? connection.execute("SELECT count(*) AS n FROM orchestrator.checkpoints WHERE store = 'kitchen' AND kind = 'heavyweight' AND pass > 0").int(0, "n")).flatMap { $0.map(Int.init) } ?? 0
                guardPid = try Self.guardPid(on: connection)
                if guardPid == nil || checkpoints < 2 { Thread.sleep(forTimeInterval: 0.005) }
            }
            guard first.isRunning, guardPid != nil else {
                Issue.record("apply finished before it could be stopped in its write guard: \(try first.finish())")
                return
            }
            first.signal(SIGSTOP)
            defer { first.signal(SIGCONT) }

            // A writer waits for the guard, then goes on once PostgreSQL has ended it.
            let writer = try PostgresConnection(url: url)
            defer { writer.close() }
            // Without a bound on the guard the writer would wait for ever: it gives up at 20 s.
            try writer.execute("SET lock_timeout = '20s'")
            let started = Date()
            try writer.execute("INSERT INTO kitchen.chef (name) VALUES ('written while apply was stopped')")
            let waited = Date().timeIntervalSince(started)
            print("a writer behind a stopped apply's write guard (--idle-timeout 1500) waited \(String(format: "%.3f", waited)) s")
            #expect(waited < 10, "the writer waited \(waited) s")
            #expect(try Self.guardPid(on: connection) == nil)

            first.signal(SIGCONT)
            let stopped = try first.finish(killingAfter: 60)
            #expect(stopped.exitCode == 1, "\(stopped)")
            #expect(stopped.stderr.contains("idle-in-transaction timeout") || stopped.stderr.contains("the write guard (pid \(guardPid!)) stopped keeping writes out"), "\(stopped)")
            #expect(!stopped.stderr.contains("terminated abnormally"), "\(stopped)")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 1")
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.chef").int(0, "n") == 201)

            // As after a crash: the write since the last checkpoint is named, nothing changes;
            // --restart starts the step over and keeps the write.
            let resumed = try OrchestratorBinary.run(["apply", "--model", folder.path, "--streaming"], databaseURL: url)
            #expect(resumed.exitCode == 1, "\(resumed)")
            #expect(resumed.stderr.contains("chef"), "\(resumed)")
            let restarted = try OrchestratorBinary.run(["apply", "--model", folder.path, "--streaming", "--restart"], databaseURL: url)
            #expect(restarted.exitCode == 0, "\(restarted)")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 2")
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.chef").int(0, "n") == 201)
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe WHERE author_pk IS NOT NULL").int(0, "n") == 100_000)
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.chef WHERE name = 'written while apply was stopped'").int(0, "n") == 1)
        }
    }
}

extension RunningOrchestrator {
    /// Sends `signal` to the process (SIGSTOP, SIGCONT).
    func signal(_ signal: Int32) {
        _ = Foundation.kill(processIdentifier, signal)
    }
}
