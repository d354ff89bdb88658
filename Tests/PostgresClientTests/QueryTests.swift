import PostgresClient
import SQLBuilding
import Testing
import TestSupport

struct RoundTripCase: Sendable, CustomTestStringConvertible {
    var value: SQLValue
    var columnType: String
    /// The text PostgreSQL returns for the stored value.
    var expectedText: String?
    var testDescription: String { "\(value) as \(columnType)" }
}

@Suite("Queries")
struct QueryTests {
    static let roundTripCases: [RoundTripCase] = [
        .init(value: .null, columnType: "text", expectedText: nil),
        .init(value: .text(""), columnType: "text", expectedText: ""),
        .init(
            value: .text(#"it's "quoted" \ ünïcødé 🚀 $1 ; DROP TABLE t"#),
            columnType: "text",
            expectedText: #"it's "quoted" \ ünïcødé 🚀 $1 ; DROP TABLE t"#
        ),
        .init(value: .text("two\nlines\tand a tab"), columnType: "text", expectedText: "two\nlines\tand a tab"),
        .init(value: .int(Int64.min), columnType: "bigint", expectedText: "-9223372036854775808"),
        .init(value: .int(42), columnType: "bigint", expectedText: "42"),
        .init(value: .double(-0.1), columnType: "double precision", expectedText: "-0.1"),
        .init(value: .double(1.5e300), columnType: "double precision", expectedText: "1.5e+300"),
        .init(value: .bool(true), columnType: "boolean", expectedText: "t"),
        .init(value: .bool(false), columnType: "boolean", expectedText: "f"),
        .init(value: .bytes([0x00, 0x01, 0x7f, 0xff]), columnType: "bytea", expectedText: #"\x00017fff"#),
        .init(value: .bytes([]), columnType: "bytea", expectedText: #"\x"#),
    ]

    @Test("each kind of bound value is stored and read back unchanged", integration, arguments: roundTripCases)
    func boundValueRoundTrips(_ testCase: RoundTripCase) throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE t (v \(unsafeRaw: testCase.columnType))")
            let insert = try connection.execute("INSERT INTO t (v) VALUES (\(testCase.value))")
            #expect(insert.affectedRows == 1)
            let result = try connection.execute("SELECT v FROM t")
            #expect(result.columns == ["v"])
            #expect(result.rows == [[testCase.expectedText]])
            if case .bytes(let bytes) = testCase.value {
                #expect(result.bytes(0, "v") == bytes)
            }
        }
    }

    @Test("typed helpers read integers, booleans and NULL", integration)
    func typedHelpers() throws {
        try TestDatabase.withFreshConnection { connection in
            let result = try connection.execute("SELECT \(Int64(7))::bigint AS n, true AS yes, NULL::boolean AS unknown")
            #expect(result.int(0, "n") == 7)
            #expect(result.bool(0, "yes") == true)
            #expect(result.bool(0, "unknown") == nil)
            #expect(result.value(0, "unknown") == nil)
            #expect(!result.isEmpty)
        }
    }

    @Test("text without binds may hold several statements", integration)
    func multipleStatements() throws {
        try TestDatabase.withFreshConnection { connection in
            let result = try connection.execute("""
                CREATE TABLE t (n int);
                INSERT INTO t VALUES (1), (2), (3);
                UPDATE t SET n = n + 1 WHERE n > 1;
                """)
            #expect(result.affectedRows == 2)
            #expect(result.commandTag == "UPDATE 2")
            #expect(try rowCount(schema: "public", table: "t", on: connection) == 3)
            #expect(try connection.execute("SELECT n FROM t WHERE n > 100").isEmpty)
        }
    }

    @Test("IF NOT EXISTS notices do not fail the statement", integration)
    func noticesAreIgnored() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("CREATE TABLE IF NOT EXISTS t (n int)")
            try connection.execute("CREATE TABLE IF NOT EXISTS t (n int)")
            #expect(try tableExists(schema: "public", table: "t", on: connection))
        }
    }

    @Test("catalog helpers describe columns in order", integration)
    func catalogHelpers() throws {
        try TestDatabase.withFreshConnection { connection in
            try connection.execute("""
                CREATE SCHEMA app;
                CREATE TABLE app.note (id bigint NOT NULL, title text DEFAULT 'untitled', body text);
                """)
            #expect(try schemaExists("app", on: connection))
            #expect(try !schemaExists("missing", on: connection))
            #expect(try !tableExists(schema: "app", table: "missing", on: connection))
            #expect(try columns(in: "app", table: "note", on: connection) == [
                CatalogColumn(name: "id", dataType: "bigint", isNullable: false),
                CatalogColumn(name: "title", dataType: "text", isNullable: true, defaultExpression: "'untitled'::text"),
                CatalogColumn(name: "body", dataType: "text", isNullable: true),
            ])
        }
    }
}
