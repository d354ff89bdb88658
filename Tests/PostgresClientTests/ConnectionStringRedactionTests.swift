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
        .init(input: "postgres://u:SECRET@h/db?sslpassword=SECRET&%70assword=SECRET", expected: "postgres://u:***@h/db?sslpassword=***&%70assword=***"),
        .init(input: "postgres://u:SE%20CRET@[::1]:5432,h2:6543/db", expected: "postgres://u:***@[::1]:5432,h2:6543/db"),
        .init(input: "host=h sslpassword=SECRET password=SECRET password=SECRET", expected: "host=h sslpassword=*** password=*** password=***"),
        .init(input: "host=h\tpassword=SECRET", expected: "host=h\tpassword=***"),
        // libpq splits values at ASCII whitespace only, and reads a quote followed by a combining mark as a quote.
        .init(input: "host=h password=SE\u{00A0}CRET dbname='\u{0301}d'", expected: "host=h password=*** dbname='\u{0301}d'"),
        .init(input: "host=x user=u", expected: "host=x user=u"),
        .init(input: "", expected: ""),
    ]

    /// Issue 9.1: strings libpq or we cannot read are never shown, whatever part holds the password.
    static let unreadable = [
        "postgress://postgres:SECRET@host/db",
        "http://postgres:SECRET@host/db",
        "postgres:/postgres:SECRET@host/db",
        "POSTGRES://postgres:SECRET@host/db",
        " postgres://postgres:SECRET@host/db",
        "jdbc:postgresql://host:5432/db?user=postgres&password=SECRET",
        "host=h passwd=SECRET",
        "host=h password=SE CRET dbname=d",
        "host=h password=SE CRET",
        "host=x password SECRET",
        "password='SE CRET",
        "postgres://user:SE@CRET@host/db",
        "postgres://user:SE/CRET@host/db",
        "postgres://user:12/SECRET@host/db",
        "postgres://user:SECRET",
        "postgres://user:SE CRET/db",
        "postgres://host?password=SECRET@other/db",
        "postgres://user:SE%CRET@host/db",
        "postgres://user@host/db?password=SE&CRET",
        "postgres://user@host/db?password=SE=CRET",
        "postgres://user:SE\u{0}CRET@host/db",
    ]

    @Test("a string that cannot be read safely is not shown at all", arguments: unreadable)
    func unreadableIsNotShown(_ input: String) {
        #expect(redactedConnectionString(input) == ConnectionString.notShown)
        do {
            _ = try ConnectionString(input)
            Issue.record("read \(input) as a connection string")
        } catch {
            #expect(!error.description.contains("SE"), "\(error)")
            #expect(!error.description.contains("CRET"), "\(error)")
        }
    }

    @Test("a refused string is a connection error that names the reason and not the string")
    func refusedBeforeConnecting() {
        #expect {
            try PostgresConnection(url: "postgress://postgres:SECRET@127.0.0.1:1/db")
        } throws: { error in
            let error = error as? PostgresError
            return error?.kind == .connection && error?.message.contains("a word has no \"=\" after it") == true
                && error?.description.contains("SECRET") == false && error?.description.contains("127.0.0.1") == false
        }
    }

    @Test("the password is replaced by *** and everything else is kept", arguments: cases)
    func redactsPassword(_ testCase: RedactionCase) {
        let redacted = redactedConnectionString(testCase.input)
        #expect(redacted == testCase.expected)
        #expect(!redacted.contains("SECRET"))
        #expect(!redacted.contains("CRET"))
    }
}
