import Foundation
import Mapping
import ObjectModel
import PostgresClient

/// Values to and from PostgreSQL's text format, for the streaming path. Reads expect the
/// shapes `StreamedMapping.sourceRows` selects (dates as epoch seconds, binary as hex).
enum ValueText {
    /// The value of a column of attribute type `type`; nil text is NULL.
    static func decode(_ text: String?, as type: AttributeType) throws -> Value {
        guard let text else { return .null }
        let value: Value? = switch type {
        case .integer16, .integer32, .integer64: Int64(text).map(Value.int)
        case .decimal: Value.decimal(normalizing: text)
        case .double: Double(text).map(Value.double)
        case .float: Float(text).map { .double(Double($0)) }
        case .string, .uri: .string(text)
        case .boolean: text == "t" ? .bool(true) : text == "f" ? .bool(false) : nil
        case .date: Double(text).map { .date(Date(timeIntervalSince1970: $0)) }
        case .binaryData, .transformable: QueryResult.bytes(fromHex: text).map(Value.bytes)
        case .uuid: UUID(uuidString: text).map(Value.uuid)
        case .undefined: nil
        }
        guard let value else { throw PolicyError(message: "cannot read \(text.prefix(40)) as \(type.rawValue)") }
        return value
    }

    /// The text PostgreSQL parses into the column; nil for NULL.
    static func encode(_ value: Value) -> String? {
        switch value {
        case .null: return nil
        case .int(let i): return String(i)
        case .double(let d):
            if d.isNaN { return "NaN" }
            if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
            return "\(d)"
        case .decimal(let text): return text
        case .string(let s): return s
        case .bool(let b): return b ? "t" : "f"
        case .date(let date): return timestamp(date)
        case .bytes(let bytes):
            let digits = Array("0123456789abcdef".utf8)
            var text: [UInt8] = Array("\\x".utf8)
            text.reserveCapacity(2 + bytes.count * 2)
            for byte in bytes {
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 0x0f)])
            }
            return String(decoding: text, as: UTF8.self)
        case .uuid(let uuid): return uuid.uuidString.lowercased()
        }
    }

    /// `YYYY-MM-DD HH:MM:SS.ffffff+00`, to the microsecond PostgreSQL keeps. Written digit by
    /// digit: `String(format:)` costs microseconds a call on Linux, and rows stream by the million.
    static func timestamp(_ date: Date) -> String {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let seconds = Int(floor(micros / 1_000_000))
        let fraction = Int(micros - Double(seconds) * 1_000_000)
        var parts = tm()
        var time = time_t(seconds)
        gmtime_r(&time, &parts)
        let year = Int(parts.tm_year) + 1900
        guard (0...9999).contains(year) else {
            return String(
                format: "%04d-%02d-%02d %02d:%02d:%02d.%06d+00", year, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), fraction
            )
        }
        var text: [UInt8] = []
        text.reserveCapacity(29)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        digits(year, 4); text.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2); text.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2); text.append(UInt8(ascii: " "))
        digits(Int(parts.tm_hour), 2); text.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2); text.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2); text.append(UInt8(ascii: "."))
        digits(fraction, 6)
        text += Array("+00".utf8)
        return String(decoding: text, as: UTF8.self)
    }
}
