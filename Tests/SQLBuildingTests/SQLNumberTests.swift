import Testing
import SQLBuilding

@Suite("SQLNumber: inline numbers, only ever number text")
struct SQLNumberTests {
    @Test("number text in the forms Decimal and PostgreSQL print is taken as it is", arguments: [
        "0", "12", "-3", "12.50", "1.", ".5", "-0.25", "1e+20", "1E-05", "99999999999999999999999999999999999999000000",
    ])
    func numberTextIsKept(_ text: String) throws {
        let number = try #require(SQLNumber(text))
        let sql: SQL = "x = \(literal: number)"
        #expect(sql.text == "x = " + text)
        #expect(sql.binds.isEmpty)
    }

    @Test("anything else is refused", arguments: [
        "", "-", ".", "+1", "1,5", "1.5.2", "NaN", "Infinity", "inf", "1e", "0x1F", " 1", "1 ", "1; DROP TABLE t", "1--", "(1)",
    ])
    func otherTextIsRefused(_ text: String) {
        #expect(SQLNumber(text) == nil)
    }

    @Test("a Double is written as Swift's shortest text that reads back to it")
    func doublesAreShortestText() {
        let sql: SQL = "\(literal: 1.5), \(literal: -0.0), \(literal: 0.00001), \(literal: 1e20), \(literal: 978307200.25)"
        #expect(sql.text == "1.5, -0.0, 1e-05, 1e+20, 978307200.25")
        #expect(sql.binds.isEmpty)
    }

    @Test("the sign is known, so that a caller can parenthesize a negative number after an operator")
    func negativeNumbersAreKnown() throws {
        #expect(try #require(SQLNumber("-3")).isNegative)
        #expect(SQLNumber(-0.0).isNegative)
        #expect(try !#require(SQLNumber("3")).isNegative)
        #expect(!SQLNumber(2.5).isNegative)
    }
}
