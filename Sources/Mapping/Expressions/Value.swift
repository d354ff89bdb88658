import Foundation

/// A value as expressions see it: a constant, a column of the source row read into Swift, or
/// the result of evaluating an expression on the streaming path.
public enum Value: Sendable, Hashable {
    case null
    case int(Int64)
    case double(Double)
    /// A decimal as its text, so no precision is lost. Build it with `decimal(normalizing:)` so
    /// equal numbers compare equal.
    case decimal(String)
    case string(String)
    case bool(Bool)
    case date(Date)
    case bytes([UInt8])
    case uuid(UUID)

    /// A decimal in canonical text (`1.50` and `1.5` give the same value); nil when `text` is
    /// not a number.
    public static func decimal(normalizing text: String) -> Value? {
        guard let number = decimalNumber(text) else { return nil }
        return .decimal(number.description)
    }
}

/// Parses decimal text in the forms PostgreSQL prints (`12.50`, `-3`, `1e+20`), exactly.
func decimalNumber(_ text: String) -> Decimal? {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    guard trimmed.range(of: #"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"#, options: .regularExpression) != nil else {
        return nil
    }
    return Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX"))
}
