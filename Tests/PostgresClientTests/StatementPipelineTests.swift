import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

@Suite("Statement pipelines")
struct StatementPipelineTests {
    @Test("statements with binds run in order in one pipeline and each returns its own result", integration)
    func resultsInOrder() throws {
        try TestDatabase.withFreshConnection { connection in
            let before = connection.roundTrips
            let results = try StatementPipeline.execute([
                "CREATE TABLE t (n int, label text)",
                "INSERT INTO t VALUES (\(1), \("one")), (\(2), \("two"))",
                "UPDATE t SET label = upper(label) WHERE n >= \(2)",
                "SELECT n, label FROM t ORDER BY n",
            ], on: connection)
            #expect(connection.roundTrips - before == 1)
            #expect(results.map(\.affectedRows) == [0, 2, 1, 2])
            #expect(results[3].rows == [["1", "one"], ["2", "TWO"]])
            // The session is out of pipeline mode: a statement runs as before.
            #expect(try connection.execute("SELECT count(*) AS n FROM t").value(0, "n") == "2")
        }
    }

    @Test("a failing statement is thrown naming it; the ones after it do not run; in a transaction nothing is kept", integration)
    func failureNamesTheStatementAndRollsBack() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE t (n int PRIMARY KEY)")
            let error = try #require(#expect(throws: PostgresError.self) {
                try StatementPipeline.execute([
                    "BEGIN", "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)", "COMMIT",
                ], on: connection)
            })
            #expect(error.statement == "INSERT INTO t VALUES (1)")
            #expect(error.sqlState == .uniqueViolation, "\(error)")
            #expect(error.message.contains("duplicate key"), "\(error)")
            // The transaction failed and waits for its ROLLBACK, as after any failed statement.
            #expect(throws: PostgresError.self) { try connection.execute("SELECT 1") }
            try connection.execute("ROLLBACK")
            #expect(try connection.execute("SELECT count(*) AS n FROM t").value(0, "n") == "0")
        }
    }

    @Test("a statement waiting for a lock ends at lock_timeout with the holder named, and the session is usable after", integration)
    func lockTimeoutInAPipeline() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE t (n int)")
            let holder = try connection.reconnect()
            defer { holder.close() }
            try holder.execute("BEGIN")
            try holder.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")
            try connection.bound(lockWaits: LockWaitBound(milliseconds: 30_000, onWait: { _ in }))
            let error = try #require(#expect(throws: PostgresError.self) {
                try connection.lookingAtLockWaits(after: 0.1) {
                    try StatementPipeline.execute(["BEGIN", "SET LOCAL lock_timeout = 5000", "INSERT INTO t VALUES (1)", "COMMIT"], on: connection)
                }
            })
            #expect(error.sqlState == .lockNotAvailable, "\(error)")
            #expect(error.statement == "INSERT INTO t VALUES (1)")
            // The lock watcher looked at the wait (after 0.1 s of the 5 s): the holder is named.
            #expect(error.lockWait?.holders.isEmpty == false, "\(error)")
            try connection.execute("ROLLBACK")
            try holder.execute("ROLLBACK")
            try StatementPipeline.execute(["INSERT INTO t VALUES (2)"], on: connection)
            #expect(try connection.execute("SELECT string_agg(n::text, ',') AS n FROM t").value(0, "n") == "2")
        }
    }

    @Test("a session ended by the server fails the pipeline with the server's reason", integration)
    func endedSession() throws {
        try TestDatabase.withFreshConnection { connection in
            let pid = try #require(try connection.execute("SELECT pg_backend_pid() AS pid").value(0, "pid"))
            let other = try connection.reconnect()
            defer { other.close() }
            try other.execute("SELECT pg_terminate_backend(\(Int(pid)!))")
            let error = try #require(#expect(throws: PostgresError.self) {
                try StatementPipeline.execute(["SELECT 1", "SELECT 2"], on: connection)
            })
            #expect(error.kind == .connection || error.message.contains("terminat") || error.message.contains("closed"), "\(error)")
        }
    }
}
