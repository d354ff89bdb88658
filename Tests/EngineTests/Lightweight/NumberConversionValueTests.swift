import Testing
import ObjectModel
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Planning

/// The SQL of every number type change, run by PostgreSQL on values at the edges: which values
/// the pre-check names (and that none makes the check itself fail), and what the others become.
/// Proves Planning/Changes: AlterColumnType, DataCheck, ShortestFloatText.
@Suite(integration) struct NumberConversionValueTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var from: AttributeType
        var to: AttributeType
        /// Input text of a `from` value.
        var value: String
        /// The converted value as PostgreSQL prints it; nil: the pre-check names the row.
        var converted: String?

        var testDescription: String { "\(from.rawValue) '\(value)' -> \(to.rawValue): \(converted ?? "does not fit")" }
    }

    static func c(_ from: AttributeType, _ to: AttributeType, _ values: [(String, String?)]) -> [Case] {
        values.map { Case(from: from, to: to, value: $0.0, converted: $0.1) }
    }

    static let lossless: [Case] = [
        c(.boolean, .integer16, [("true", "1"), ("false", "0")]),
        c(.boolean, .integer32, [("true", "1")]),
        c(.boolean, .integer64, [("true", "1")]),
        c(.boolean, .decimal, [("true", "1"), ("false", "0")]),
        c(.boolean, .float, [("true", "1")]),
        c(.boolean, .double, [("false", "0")]),
        c(.integer16, .float, [("-32768", "-32768"), ("32767", "32767")]),
        c(.integer16, .double, [("-32768", "-32768")]),
        c(.integer16, .decimal, [("32767", "32767")]),
        c(.integer32, .double, [("2147483647", "2147483647"), ("-2147483648", "-2147483648")]),
        c(.integer32, .decimal, [("-2147483648", "-2147483648")]),
        c(.integer64, .decimal, [("9223372036854775807", "9223372036854775807"), ("-9223372036854775808", "-9223372036854775808")]),
        c(.float, .double, [("0.1", "0.10000000149011612"), ("NaN", "NaN"), ("-Infinity", "-Infinity")]),
    ].flatMap { $0 }

    static let checked: [Case] = [
        // Integers to Boolean: only 0 and 1 (Core Data would keep 2 and read it as YES).
        c(.integer16, .boolean, [("0", "false"), ("1", "true"), ("2", nil), ("-1", nil)]),
        c(.integer32, .boolean, [("0", "false"), ("-2147483648", nil)]),
        c(.integer64, .boolean, [("1", "true"), ("9223372036854775807", nil)]),
        // Narrower integers: their range.
        c(.integer32, .integer16, [("32767", "32767"), ("-32768", "-32768"), ("32768", nil), ("-32769", nil)]),
        c(.integer64, .integer32, [("2147483647", "2147483647"), ("2147483648", nil), ("-9223372036854775808", nil)]),
        c(.integer64, .integer16, [("-32768", "-32768"), ("40000", nil)]),
        // Integers to floating point: up to 2^53 (Double), 2^24 (Float).
        c(.integer64, .double, [("9007199254740992", "9.007199254740992e+15"), ("-9007199254740992", "-9.007199254740992e+15"), ("9007199254740993", nil), ("1152921504606846976", nil)]),
        c(.integer64, .float, [("16777216", "1.6777216e+07"), ("16777217", nil), ("-9223372036854775808", nil)]),
        c(.integer32, .float, [("-16777216", "-1.6777216e+07"), ("2147483647", nil)]),
        // Decimal: whole numbers in range to integers; what reads back the same to floating point.
        c(.decimal, .integer16, [("12.000", "12"), ("-32768", "-32768"), ("1.5", nil), ("32768", nil), ("NaN", nil), ("Infinity", nil)]),
        c(.decimal, .integer32, [("-2147483648", "-2147483648"), ("2147483647.5", nil)]),
        c(.decimal, .integer64, [("9223372036854775807", "9223372036854775807"), ("-9223372036854775808", "-9223372036854775808"), ("9223372036854775808", nil)]),
        c(.decimal, .boolean, [("1.0", "true"), ("0", "false"), ("0.5", nil)]),
        c(.decimal, .double, [("0.1", "0.1"), ("123456.789", "123456.789"), ("5e-324", "5e-324"), ("1.7976931348623157e308", "1.7976931348623157e+308"),
                              ("0.12345678901234567890", nil), ("1e400", nil), ("1e-400", nil), ("NaN", nil), ("-Infinity", nil)]),
        c(.decimal, .float, [("0.1", "0.1"), ("3.4028235e38", "3.4028235e+38"), ("0.123456789", nil), ("3.4028236e38", nil), ("1e-46", nil)]),
        // Float and Double: whole numbers in range to integers.
        c(.float, .integer32, [("3", "3"), ("-2147483648", "-2147483648"), ("2.5", nil), ("3e9", nil), ("NaN", nil), ("Infinity", nil)]),
        c(.float, .integer16, [("-32768", "-32768"), ("32768", nil)]),
        c(.float, .integer64, [("-9223372036854775808", "-9223372036854775808"), ("9223372036854775808", nil)]),
        c(.float, .boolean, [("1", "true"), ("0.5", nil), ("NaN", nil)]),
        c(.double, .integer64, [("42", "42"), ("-9223372036854775808", "-9223372036854775808"), ("9223372036854775808", nil), ("1e19", nil), ("NaN", nil)]),
        c(.double, .integer32, [("2147483647", "2147483647"), ("2147483648", nil), ("-0.5", nil)]),
        c(.double, .integer16, [("32767.0", "32767"), ("32767.5", nil), ("-Infinity", nil)]),
        c(.double, .boolean, [("0", "false"), ("NaN", nil)]),
        // Finite Float and Double values to Decimal, as their shortest text.
        c(.float, .decimal, [("0.1", "0.1"), ("16777216", "16777216"), ("NaN", nil), ("-Infinity", nil)]),
        c(.double, .decimal, [("0.1", "0.1"), ("1.0000000000000002", "1.0000000000000002"), ("1.5e10", "15000000000"), ("NaN", nil), ("Infinity", nil)]),
        // Double to Float: the same binary number, or the same shortest decimal.
        c(.double, .float, [("0.1", "0.1"), ("0.5", "0.5"), ("0.10000000149011612", "0.1"), ("NaN", "NaN"), ("Infinity", "Infinity"),
                            ("0.1000000001", nil), ("16777217", nil), ("1e300", nil), ("1e-50", nil), ("-1e-45", nil)]),
    ].flatMap { $0 }

    /// Every checked pair has a row here: the table above is the matrix's checked half.
    @Test func everyCheckedPairIsExercised() {
        let pairs = Set(Self.checked.map { "\($0.from.rawValue) -> \($0.to.rawValue)" })
        let expected = NumberConversion.numberTypes.flatMap { from in
            NumberConversion.numberTypes.filter { NumberConversion.between(from, $0) == .checked }.map { "\(from.rawValue) -> \($0.rawValue)" }
        }
        #expect(pairs == Set(expected))
    }

    @Test func valuesConvertAsPlanned() throws {
        try TestDatabase.withFreshConnection { connection in
            for row in Self.lossless + Self.checked {
                try connection.transaction {
                    try Self.check(row, on: connection)
                }
            }
        }
    }

    static func check(_ row: Case, on connection: PostgresConnection) throws {
        let conversion = try #require(NumberColumnConversion(from: ColumnTypes.sqlType(for: row.from), to: ColumnTypes.sqlType(for: row.to)))
        if conversion.readsFloatText {
            for statement in ShortestFloatText().statements(in: "s") { try connection.execute(statement.sql) }
        }
        let input = "SELECT \(quoteLiteral(row.value))::\(ColumnTypes.sqlType(for: row.from)) AS n"
        let misfit = conversion.misfit("n") ?? "false"
        let fits = try connection.execute(SQL(unsafeRaw: "SELECT NOT coalesce((\(misfit)), false) AS fits FROM (\(input)) AS t")).bool(0, "fits")
        #expect(fits == (row.converted != nil), "\(row.testDescription): the pre-check says \(fits == true ? "fits" : "does not fit")")
        guard let expected = row.converted, fits == true else { return }
        let converted = "(\(conversion.using("n") ?? "n"))::\(ColumnTypes.sqlType(for: row.to))::text"
        let actual = try connection.execute(SQL(unsafeRaw: "SELECT \(converted) AS v FROM (\(input)) AS t")).value(0, "v")
        #expect(actual == expected, "\(row.testDescription)")
    }
}
