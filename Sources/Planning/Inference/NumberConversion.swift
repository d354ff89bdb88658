import ObjectModel

/// A type change between numbers, which Core Data's inferred mapping carries: Boolean, Integer
/// 16/32/64, Decimal, Float and Double values are all NSNumber, and the default `$source.<name>`
/// expression hands them to the destination whatever its type. Other type changes (to or from
/// strings, dates, binary data, UUIDs, URIs) are refused, as Core Data refuses them.
enum NumberConversion: Sendable, Hashable {
    /// Every value of the source type is exactly a value of the destination type: in place.
    case lossless
    /// Some values would not convert exactly: the rows are checked first, and the step runs
    /// only when every value fits (`fitRule` says which do).
    case checked

    static let numberTypes: [AttributeType] = [.boolean, .integer16, .integer32, .integer64, .decimal, .float, .double]

    /// nil: not a change between two number types.
    static func between(_ from: AttributeType, _ to: AttributeType) -> NumberConversion? {
        guard from != to, numberTypes.contains(from), numberTypes.contains(to) else { return nil }
        return isLossless(from, to) ? .lossless : .checked
    }

    /// Booleans are 0 and 1; an integer type holds every value of a narrower one; a Double holds
    /// every integer up to 2^53 (Integer 32 included), a Float up to 2^24 (Integer 16 included);
    /// a Decimal every integer. Float and Double values may be NaN or infinite, which a Decimal
    /// does not hold, so a change to Decimal from them is checked.
    private static func isLossless(_ from: AttributeType, _ to: AttributeType) -> Bool {
        switch (from, to) {
        case (.boolean, _): true
        case (.integer16, _): to != .boolean
        case (.integer32, .integer64), (.integer32, .decimal), (.integer32, .double): true
        case (.integer64, .decimal): true
        case (.float, .double): true
        default: false
        }
    }

    /// The number type a column of `sqlType` holds (each has its own SQL type); nil for others.
    static func numberType(ofColumnType sqlType: String) -> AttributeType? {
        numberTypes.first { ColumnTypes.sqlType(for: $0) == sqlType }
    }

    /// Which values of a checked change fit the destination, in words.
    static func fitRule(from: AttributeType, to: AttributeType) -> String {
        switch to {
        case .boolean:
            return "only 0 and 1 fit"
        case .integer16, .integer32, .integer64:
            let (low, high) = integerRange(to)
            return from.isInteger ? "integers from \(low) to \(high) fit" : "whole numbers from \(low) to \(high) fit"
        case .double where from.isInteger:
            return "integers from -2^53 to 2^53 fit"
        case .float where from.isInteger:
            return "integers from -2^24 to 2^24 fit"
        case .decimal:
            return "finite numbers fit, not NaN or infinity"
        default:
            return "numbers the \(to.rawValue) holds exactly or reads back as the same decimal fit"
        }
    }

    static func integerRange(_ type: AttributeType) -> (low: Int64, high: Int64) {
        switch type {
        case .integer16: (Int64(Int16.min), Int64(Int16.max))
        case .integer32: (Int64(Int32.min), Int64(Int32.max))
        default: (Int64.min, Int64.max)
        }
    }
}
