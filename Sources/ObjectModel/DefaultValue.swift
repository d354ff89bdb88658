import Foundation

/// A default value parsed against its attribute's type.
public enum DefaultValue: Sendable, Hashable {
    case integer(Int64)
    /// Kept as text so no precision is lost.
    case decimal(String)
    case double(Double)
    case string(String)
    case boolean(Bool)
    /// ISO 8601 text as written, or seconds since 2001-01-01 as Xcode writes them.
    case date(Date)
    case uuid(UUID)

    /// Parses `text` as a value of `type`; nil when it does not parse or the type has no
    /// defaults (binary data, transformable).
    public static func parse(_ text: String, as type: AttributeType) -> DefaultValue? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch type {
        case .integer16, .integer32, .integer64:
            guard let value = Int64(trimmed) else { return nil }
            let range: ClosedRange<Int64> = switch type {
            case .integer16: Int64(Int16.min)...Int64(Int16.max)
            case .integer32: Int64(Int32.min)...Int64(Int32.max)
            default: Int64.min...Int64.max
            }
            return range.contains(value) ? .integer(value) : nil
        case .decimal:
            guard trimmed.range(of: #"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"#, options: .regularExpression) != nil,
                  fitsNumeric(trimmed)
            else { return nil }
            return .decimal(trimmed)
        case .double:
            guard let value = Double(trimmed), value.isFinite else { return nil }
            return .double(value)
        case .float:
            // PostgreSQL's real refuses what overflows or underflows to zero.
            guard let value = Double(trimmed), Float(value).isFinite, value == 0 || Float(value) != 0 else { return nil }
            return .double(value)
        case .string, .uri:
            return .string(text)
        case .boolean:
            switch trimmed.lowercased() {
            case "yes", "true", "1": return .boolean(true)
            case "no", "false", "0": return .boolean(false)
            default: return nil
            }
        case .date:
            let formatter = ISO8601DateFormatter()
            var date = Double(trimmed).map(Date.init(timeIntervalSinceReferenceDate:)) ?? formatter.date(from: trimmed)
            if date == nil {
                formatter.formatOptions = [.withFullDate]
                date = formatter.date(from: trimmed)
            }
            return date.flatMap { defaultDates.contains($0) ? .date($0) : nil }
        case .uuid:
            return UUID(uuidString: trimmed).map(DefaultValue.uuid)
        case .binaryData, .transformable, .undefined:
            return nil
        }
    }

    /// Years 1 to 9999: what the store's DEFAULT (ISO 8601 text) can spell and timestamptz
    /// holds. Seconds such as `1e400` fall outside.
    static let defaultDates: ClosedRange<Date> = {
        let formatter = ISO8601DateFormatter()
        return formatter.date(from: "0001-01-01T00:00:00Z")!...formatter.date(from: "9999-12-31T23:59:59Z")!
    }()

    /// PostgreSQL's numeric holds at most 131072 digits before the decimal point and 16383
    /// after it; `1e1000000` is valid text that it refuses ("value overflows numeric format").
    static func fitsNumeric(_ text: String) -> Bool {
        let parts = text.lowercased().split(separator: "e", omittingEmptySubsequences: false)
        let exponent: Int
        if parts.count == 2 {
            guard let value = Int(parts[1]), abs(value) < 1_000_000_000 else { return false }
            exponent = value
        } else {
            exponent = 0
        }
        let mantissa = parts[0].drop { $0 == "+" || $0 == "-" }
        let pieces = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let integerDigits = pieces[0].drop { $0 == "0" }
        let fractionDigits = pieces.count > 1 ? pieces[1] : ""
        guard fractionDigits.count - exponent <= 16383 else { return false }
        if !integerDigits.isEmpty { return integerDigits.count + exponent <= 131_072 }
        // Below 1: the leading digit is past the point, so only a huge exponent can overflow.
        guard let leading = fractionDigits.firstIndex(where: { $0 != "0" }) else { return true }
        return exponent - fractionDigits.distance(from: fractionDigits.startIndex, to: leading) <= 131_072
    }
}
