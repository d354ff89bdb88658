import PostgresClient
import SQLBuilding
import Testing
import TestSupport

@Suite("COPY FROM STDIN")
struct CopyTests {
    static let awkwardValues: [String?] = [
        "plain", "tab\there", "new\nline", "carriage\rreturn", "back\\slash", "ends with \\", #"\N"#, #"\."#,
        "", "ünïcødé 🚀", "'quotes' \"too\"", nil,
    ]

    @Test("10,000 rows with tabs, newlines, backslashes and NULLs read back identical", integration)
    func copiesAwkwardRows() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE t (id bigint PRIMARY KEY, a text, b text)")
            let rows: [[String?]] = (0..<10_000).map { index in
                let awkward = Self.awkwardValues[index % Self.awkwardValues.count]
                return [String(index), awkward, index.isMultiple(of: 7) ? nil : "row \(index)\t\(awkward ?? "-")"]
            }
            let copied = try connection.copyIn("COPY t (id, a, b) FROM STDIN", rows: rows)
            #expect(copied == 10_000)
            let result = try connection.execute("SELECT id, a, b FROM t ORDER BY id")
            #expect(result.rows == rows)
        }
    }

    @Test("a row the server rejects fails the COPY and leaves the connection usable", integration)
    func rejectedRow() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE t (id bigint NOT NULL)")
            let error = #expect(throws: PostgresError.self) {
                try connection.copyIn("COPY t (id) FROM STDIN", rows: [["1"], [nil]])
            }
            #expect(error?.kind == .copy)
            #expect(error?.sqlState == SQLState.notNullViolation)
            #expect(error?.statement == "COPY t (id) FROM STDIN")
            #expect(try rowCount(schema: "public", table: "t", on: connection) == 0)
        }
    }

    @Test("COPY sent to execute fails cleanly and the connection stays usable", integration)
    func copyThroughExecute() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE t (id bigint)")
            let error = #expect(throws: PostgresError.self) {
                try connection.execute("COPY t (id) FROM STDIN")
            }
            #expect(error?.kind == .protocol)
            #expect(try connection.execute("SELECT 1 AS one").int(0, "one") == 1)
        }
    }

    @Test("a statement that is not COPY FROM STDIN is refused by copyIn", integration)
    func notACopy() throws {
        try TestDatabase.withFreshConnection { connection throws in
            let error = #expect(throws: PostgresError.self) {
                try connection.copyIn("SELECT 1", rows: [["1"]])
            }
            #expect(error?.kind == .protocol)
            #expect(try connection.execute("SELECT 1 AS one").int(0, "one") == 1)
        }
    }
}
