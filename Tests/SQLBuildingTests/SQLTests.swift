import Testing
import SQLBuilding

@Suite struct SQLTests {
    @Test func interpolatedValuesBecomeBindsAndIdentifiersAreQuoted() {
        let table = "odd\"name"
        let sql: SQL = "SELECT \(ident: "a") FROM \(ident: "s", table) WHERE x = \(42) AND y = \("it's")"
        #expect(sql.text == #"SELECT "a" FROM "s"."odd""name" WHERE x = $1 AND y = $2"#)
        #expect(sql.binds == [.int(42), .text("it's")])
    }

    @Test func nestedFragmentsAreRenumbered() {
        let inner: SQL = "b = \(2) AND c = '$1'"
        let outer: SQL = "a = \(1) AND \(inner)"
        #expect(outer.text == "a = $1 AND b = $2 AND c = '$1'")
        #expect(outer.binds == [.int(1), .int(2)])
    }

    @Test func literalsDoubleTheirQuotes() {
        let sql: SQL = "DEFAULT \(literal: "O'Brien")"
        #expect(sql.text == "DEFAULT 'O''Brien'")
        #expect(sql.binds.isEmpty)
    }

    @Test func literalListsQuoteEachNameWithoutBinds() {
        let sql: SQL = "\(ident: "_entity") IN (\(literals: ["A", "O'Brien"]))"
        #expect(sql.text == #""_entity" IN ('A', 'O''Brien')"#)
        #expect(sql.binds.isEmpty)
        let empty: SQL = "(\(literals: []))"
        #expect(empty.text == "()")
    }

    @Test func aQualifiedNameLiteralQuotesTheIdentifiersThenTheLiteral() {
        let sql: SQL = "to_regclass(\(nameLiteral: "o'k", "t\"1"))"
        #expect(sql.text == #"to_regclass('"o''k"."t""1"')"#)
        #expect(sql.binds.isEmpty)
    }

    @Test func integerLiteralsAreInlineWithTheirSign() {
        let sql: SQL = "x >= \(literal: Int64(-32768)) AND x < \(literal: UInt64(Int64.max) + 1)"
        #expect(sql.text == "x >= -32768 AND x < 9223372036854775808")
        #expect(sql.binds.isEmpty)
    }

    @Test func dollarQuotingPicksATagTheBodyDoesNotContain() {
        #expect(SQL.dollarQuoted("\nBEGIN NULL; END\n", tag: "check").text == "$check$\nBEGIN NULL; END\n$check$")
        let body: SQL = "RAISE NOTICE '$check$ and $check1$';"
        #expect(SQL.dollarQuoted(body, tag: "check").text == "$check2$RAISE NOTICE '$check$ and $check1$';$check2$")
    }

    @Test func joinedKeepsEveryBind() {
        let parts: [SQL] = ["x = \(1)", "y = \(2)"]
        let sql = SQL.joined(parts, separator: " OR ")
        #expect(sql.text == "x = $1 OR y = $2")
        #expect(sql.binds.count == 2)
    }

    @Test func bytesAreSentAsHex() {
        #expect(SQLValue.bytes([0, 255, 16]).textRepresentation == "\\x00ff10")
        #expect(SQLValue.null.textRepresentation == nil)
    }
}

@Suite("SQL.inlined: binds written as literals, for plan --format sql")
struct SQLInlinedTests {
    @Test("each value becomes the literal PostgreSQL reads back; placeholders in quotes stay")
    func valuesBecomeLiterals() {
        let name = "O'Brien"
        let sql: SQL = "INSERT INTO \(ident: "a b", "t") VALUES (\(name), \(nil as String?), \(42), \(true), \(SQLValue.bytes([0, 255])), '$1', \(SQLValue.double(1.5)))"
        #expect(sql.inlined == #"INSERT INTO "a b"."t" VALUES ('O''Brien', NULL, 42, true, '\x00ff'::bytea, '$1', '1.5'::double precision)"#)
    }

    @Test("a statement without binds is its text")
    func noBinds() {
        let sql: SQL = "SELECT 1"
        #expect(sql.inlined == "SELECT 1")
    }
}
