import PostgresClient
import SQLBuilding
import Testing
import TestSupport

@Suite("Typed errors")
struct ErrorTests {
    @Test("an undefined table reports SQLSTATE 42P01 with the statement", integration)
    func undefinedTable() throws {
        try TestDatabase.withFreshConnection { connection in
            let error = #expect(throws: PostgresError.self) {
                try connection.execute("SELECT * FROM missing_table WHERE id = \(Int64(5))")
            }
            #expect(error?.kind == .query)
            #expect(error?.sqlState == SQLState.undefinedTable)
            #expect(error?.severity == "ERROR")
            #expect(error?.position == 15)
            #expect(error?.statement == "SELECT * FROM missing_table WHERE id = $1")
            #expect(
                error?.description
                    == #"ERROR 42P01: relation "missing_table" does not exist (statement: SELECT * FROM missing_table WHERE id = $1)"#
            )
        }
    }

    @Test("a unique violation names its constraint but the description hides the bound value", integration)
    func uniqueViolation() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE account (email text CONSTRAINT account_email_key UNIQUE)")
            let email = "private-person@example.com"
            try connection.execute("INSERT INTO account (email) VALUES (\(email))")
            let error = #expect(throws: PostgresError.self) {
                try connection.execute("INSERT INTO account (email) VALUES (\(email))")
            }
            #expect(error?.sqlState == SQLState.uniqueViolation)
            #expect(error?.constraint == "account_email_key")
            #expect(error?.schema == "public")
            #expect(error?.table == "account")
            #expect(error?.detail?.contains(email) == true)
            #expect(error?.description.contains(email) == false)
        }
    }

    @Test("a not-null violation names its column", integration)
    func notNullViolation() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE t (name text NOT NULL)")
            let error = #expect(throws: PostgresError.self) {
                try connection.execute("INSERT INTO t (name) VALUES (\(SQLValue.null))")
            }
            #expect(error?.sqlState == SQLState.notNullViolation)
            #expect(error?.column == "name")
        }
    }

    @Test("the description is one line and truncates long statements")
    func descriptionIsOneLine() {
        let statement = "SELECT\n" + String(repeating: "x, ", count: 200) + "1"
        let error = PostgresError(kind: .query, message: "first\nsecond", sqlState: .syntaxError, statement: statement)
        #expect(!error.description.contains("\n"))
        #expect(error.description.hasPrefix("ERROR 42601: first; second (statement: SELECT x, x,"))
        #expect(error.description.count < 300)
    }
}
