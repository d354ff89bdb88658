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
            guard trimmed.range(of: #"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"#, options: .regularExpression) != nil else {
                return nil
            }
            return .decimal(trimmed)
        case .double, .float:
            guard let value = Double(trimmed), value.isFinite else { return nil }
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
            if let seconds = Double(trimmed) {
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            }
            let formatter = ISO8601DateFormatter()
            if let date = formatter.date(from: trimmed) { return .date(date) }
            formatter.formatOptions = [.withFullDate]
            return formatter.date(from: trimmed).map(DefaultValue.date)
        case .uuid:
            return UUID(uuidString: trimmed).map(DefaultValue.uuid)
        case .binaryData, .transformable, .undefined:
            return nil
        }
    }
}
