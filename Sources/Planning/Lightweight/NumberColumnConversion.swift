import ObjectModel
import SQLBuilding

/// The SQL of a number type change (`NumberConversion`) on a column: which values do not fit
/// the destination type, and how the others convert.
struct NumberColumnConversion {
    var from: AttributeType
    var to: AttributeType

    /// nil unless both column types hold numbers.
    init?(from: String, to: String) {
        guard let from = NumberConversion.numberType(ofColumnType: from), let to = NumberConversion.numberType(ofColumnType: to),
              NumberConversion.between(from, to) != nil else { return nil }
        self.from = from
        self.to = to
    }

    var isChecked: Bool { NumberConversion.between(from, to) == .checked }

    /// The `USING` expression; nil where PostgreSQL's own cast is exact for every value that
    /// fits. Booleans are 0 and 1 (PostgreSQL casts them to `integer` only); a Float or Double
    /// becomes the Decimal of its shortest text (0.1, not 0.1000000000000000055…), since
    /// PostgreSQL's cast to `numeric` keeps only 15 significant digits.
    func using(_ name: String) -> SQL? {
        let column: SQL = "\(ident: name)"
        if from == .boolean {
            return to == .integer32 ? "\(column)::integer" : "\(column)::integer::\(unsafeRaw: ColumnTypes.sqlType(for: to))"
        }
        if to == .boolean { return "\(column) <> 0" }
        if to == .decimal && (from == .float || from == .double) { return "\(column)::text::numeric" }
        return nil
    }

    /// A Float or Double read through its text, which is its shortest exact form only while
    /// `extra_float_digits` is positive (PostgreSQL's default).
    var readsFloatText: Bool {
        ((from == .float || from == .double) && to == .decimal) || (from == .double && to == .float) || (from == .decimal && (to == .double || to == .float))
    }

    /// PostgreSQL cannot cast a boolean column's default to a number, nor the reverse: it is
    /// dropped before, and the destination's set after.
    var dropsDefault: Bool { from == .boolean || to == .boolean }

    /// `WHERE` condition on the rows whose value would not convert exactly (NULLs fit);
    /// nil for a lossless change. Written so that no value makes the condition itself fail
    /// (a cast out of range is guarded by the comparisons before it).
    func misfit(_ name: String) -> SQL? {
        guard isChecked else { return nil }
        let c: SQL = "\(ident: name)"
        switch (from, to) {
        case (_, .boolean):
            return "\(c) NOT IN (0, 1)"
        case (_, .integer16), (_, .integer32), (_, .integer64):
            // [-2^(n-1), 2^(n-1)): both bounds are exact in every number type, and NaN and
            // infinities fall outside.
            let (low, high) = NumberConversion.integerRange(to)
            let bound: SQL = "\(literal: low) AND \(c) < \(literal: UInt64(high) + 1)"
            return from.isInteger ? "NOT (\(c) >= \(bound))" : "NOT (\(c) >= \(bound)) OR \(c) <> trunc(\(c))"
        case (_, .double) where from.isInteger:
            return "NOT (\(c) BETWEEN -9007199254740992 AND 9007199254740992)"
        case (_, .float) where from.isInteger:
            return "NOT (\(c) BETWEEN -16777216 AND 16777216)"
        case (_, .decimal):
            return "\(c) IN ('NaN', 'Infinity', '-Infinity')"
        case (.double, .float):
            // Fits when the Float holds the same binary number, or reads as the same decimal.
            return """
                CASE WHEN \(c) IN ('NaN', 'Infinity', '-Infinity') THEN false \
                WHEN abs(\(c)) > 3.4028234663852886e38 OR (\(c) <> 0 AND abs(\(c)) < 1.401298464324817e-45) THEN true \
                ELSE NOT (\(c)::real = \(c) OR \(c)::real::text::numeric = \(c)::text::numeric) END
                """
        case (.decimal, .double):
            return decimalToFloatingPoint(c, largest: "1.7976931348623157e308", smallest: "5e-324")
        case (.decimal, .float):
            return decimalToFloatingPoint(c, largest: "3.4028235e38", smallest: "1e-45")
        default:
            preconditionFailure("no fit rule for \(from) -> \(to)")
        }
    }

    /// Fits when the floating-point number, printed shortest, is the decimal again; beyond the
    /// largest and below the smallest (shortest texts of the extremes) nothing is read back,
    /// and PostgreSQL's cast would fail.
    private func decimalToFloatingPoint(_ c: SQL, largest: SQL, smallest: SQL) -> SQL {
        """
            CASE WHEN \(c) IN ('NaN', 'Infinity', '-Infinity') OR abs(\(c)) > \(largest) OR (\(c) <> 0 AND abs(\(c)) < \(smallest)) THEN true \
            ELSE \(c)::\(unsafeRaw: ColumnTypes.sqlType(for: to))::text::numeric <> \(c) END
            """
    }
}
