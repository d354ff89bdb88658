import PostgresClient
import SQLBuilding
import Testing
import TestSupport

private struct Abort: Error {}

/// `rehearsing`: everything inside is rolled back; transactions inside become savepoints.
@Suite("Rehearsals")
struct RehearsalTests {
    @Test("a rehearsal's statements, committed transactions included, are all rolled back; its value comes back", integration)
    func everythingIsRolledBack() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE t (n int)")
            let seen = try connection.rehearsing {
                try connection.execute("INSERT INTO t VALUES (\(1))")
                try connection.transaction {
                    try connection.execute("INSERT INTO t VALUES (\(2))")
                    try connection.execute("CREATE TABLE created_inside (n int)")
                }
                #expect(connection.isRehearsing)
                return try rowCount(schema: "public", table: "t", on: connection)
            }
            #expect(seen == 2, "inside, the transaction's work is visible")
            #expect(!connection.isRehearsing)
            #expect(try rowCount(schema: "public", table: "t", on: connection) == 0)
            #expect(try !tableExists(schema: "public", table: "created_inside", on: connection))
        }
    }

    @Test("a transaction that throws inside a rehearsal rolls back to its savepoint, and the rehearsal goes on", integration)
    func failedTransactionRollsBackToItsSavepoint() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE t (n int)")
            let after = try connection.rehearsing {
                try connection.execute("INSERT INTO t VALUES (\(1))")
                #expect(throws: PostgresError.self) {
                    try connection.transaction {
                        try connection.execute("INSERT INTO t VALUES (\(2))")
                        try connection.execute("SELECT 1 / 0")
                    }
                }
                #expect(throws: Abort.self) {
                    try connection.transaction {
                        try connection.execute("INSERT INTO t VALUES (\(3))")
                        throw Abort()
                    }
                }
                return try connection.execute("SELECT string_agg(n::text, ',' ORDER BY n) AS n FROM t").value(0, "n")
            }
            #expect(after == "1", "only the work outside the failed transactions is left, until the end")
            #expect(try rowCount(schema: "public", table: "t", on: connection) == 0)
        }
    }

    @Test("an error thrown by the rehearsal's body is rethrown, with everything rolled back", integration)
    func bodyErrorIsRethrown() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE t (n int)")
            #expect(throws: Abort.self) {
                try connection.rehearsing {
                    try connection.execute("INSERT INTO t VALUES (\(1))")
                    throw Abort()
                }
            }
            #expect(try rowCount(schema: "public", table: "t", on: connection) == 0)
            _ = try connection.transaction { try connection.execute("INSERT INTO t VALUES (\(4))") }
            #expect(try rowCount(schema: "public", table: "t", on: connection) == 1, "the connection works as before")
        }
    }
}
