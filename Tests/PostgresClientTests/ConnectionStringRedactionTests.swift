import PostgresClient
import Testing

struct RedactionCase: Sendable, CustomTestStringConvertible {
    var input: String
    var expected: String
    var testDescription: String { input }
}

@Suite("Connection string redaction")
struct ConnectionStringRedactionTests {
    static let cases: [RedactionCase] = [
        .init(input: "postgres://user:SECRET@host:5432/db", expected: "postgres://user:***@host:5432/db"),
        .init(
            input: "postgresql://user:SECRET@host/db?sslmode=require",
            expected: "postgresql://user:***@host/db?sslmode=require"
        ),
        .init(input: "postgres://user:SE%40CRET@host/db", expected: "postgres://user:***@host/db"),
        .init(input: "postgres://user:SE@CRET@host/db", expected: "postgres://user:***@host/db"),
        .init(input: "postgres://user:SE?CRET@host", expected: "postgres://user:***@host"),
        .init(
            input: "postgres://host/db?user=u&password=SECRET&sslmode=disable",
            expected: "postgres://host/db?user=u&password=***&sslmode=disable"
        ),
        .init(input: "postgres://user@host/db", expected: "postgres://user@host/db"),
        .init(input: "postgres://host", expected: "postgres://host"),
        .init(
            input: "host=localhost user=u password=SECRET dbname=d",
            expected: "host=localhost user=u password=*** dbname=d"
        ),
        .init(input: "password=SECRET", expected: "password=***"),
        .init(
            input: #"host=localhost password = 'SE CR\'ET' dbname=d"#,
            expected: "host=localhost password = *** dbname=d"
        ),
        .init(input: #"password=SE\ CRET port=5432"#, expected: "password=*** port=5432"),
        .init(input: "dbname='postgres://u:SECRET@h/d' host=x", expected: "dbname='postgres://u:***@h/d' host=x"),
        .init(input: "dbname='user=u password=SECRET'", expected: #"dbname='user=u password=***'"#),
        .init(input: "host=x password SECRET", expected: "host=x password ***"),
        .init(input: "host=x user=u", expected: "host=x user=u"),
        .init(input: "", expected: ""),
    ]

    @Test("the password is replaced by *** and everything else is kept", arguments: cases)
    func redactsPassword(_ testCase: RedactionCase) {
        let redacted = redactedConnectionString(testCase.input)
        #expect(redacted == testCase.expected)
        #expect(!redacted.contains("SECRET"))
        #expect(!redacted.contains("CRET"))
    }
}
