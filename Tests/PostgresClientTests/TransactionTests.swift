import PostgresClient
import SQLBuilding
import Testing
import TestSupport

private struct Abort: Error {}

@Suite("Transactions")
struct TransactionTests {
    @Test("a thrown error rolls back every statement and is rethrown unchanged", integration)
    func rollbackOnError() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE t (n int)")
            #expect(throws: Abort.self) {
                try connection.transaction {
                    try connection.execute("INSERT INTO t VALUES (\(1)), (\(2))")
                    try connection.execute("CREATE TABLE created_inside (n int)")
                    throw Abort()
                }
            }
            #expect(try rowCount(schema: "public", table: "t", on: connection) == 0)
            #expect(try !tableExists(schema: "public", table: "created_inside", on: connection))
        }
    }

    @Test("a body that returns commits its statements and its value comes back", integration)
    func commitOnSuccess() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE t (n int)")
            let inserted = try connection.transaction {
                try connection.execute("INSERT INTO t VALUES (1), (2)").affectedRows
            }
            #expect(inserted == 2)
            #expect(try rowCount(schema: "public", table: "t", on: connection) == 2)
        }
    }

    @Test("a statement failure swallowed inside the body still makes the transaction throw", integration)
    func swallowedFailureThrowsAtCommit() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE t (n int)")
            let error = #expect(throws: PostgresError.self) {
                try connection.transaction {
                    try connection.execute("INSERT INTO t VALUES (1)")
                    _ = try? connection.execute("SELECT * FROM missing")
                }
            }
            #expect(error?.statement == "COMMIT")
            #expect(try rowCount(schema: "public", table: "t", on: connection) == 0)
        }
    }
}
