import Foundation
import ObjectModel

/// Conversions between values, each as PostgreSQL does it, so that the streaming path stores
/// what the set-based path stores. Failures carry PostgreSQL's wording.
enum Conversion {
    struct Failure: Error {
        var message: String
    }

    /// A value stored in an attribute of `target` (PostgreSQL's assignment cast); `type` is
    /// the value's static type, which decides how a Float prints into a Decimal.
    static func stored(_ value: Value, as type: ValueType, in target: AttributeType) throws(Failure) -> Value {
        if value == .null { return .null }
        switch (target, value) {
        case (.integer16, _), (.integer32, _), (.integer64, _):
            let integer = try self.integer(value)
            let (range, name): (ClosedRange<Int64>, String) = switch target {
            case .integer16: (Int64(Int16.min)...Int64(Int16.max), "smallint")
            case .integer32: (Int64(Int32.min)...Int64(Int32.max), "integer")
            default: (Int64.min...Int64.max, "bigint")
            }
            guard range.contains(integer) else { throw Failure(message: "\(name) out of range") }
            return .int(integer)
        case (.decimal, .int(let i)):
            return .decimal(String(i))
        case (.decimal, .double(let d)):
            // float8 -> numeric prints 15 significant digits (float4: 6), then parses them.
            let text = String(format: type == .float ? "%.6g" : "%.15g", d)
            return Value.decimal(normalizing: text) ?? .decimal(text)
        case (.decimal, .decimal(let text)):
            return Value.decimal(normalizing: text) ?? value
        case (.double, _):
            return .double(try double(value))
        case (.float, _):
            let single: Float = switch value {
            case .decimal(let text): Float(text) ?? .infinity
            default: Float(try double(value))
            }
            guard single.isFinite else { throw Failure(message: "value out of range: overflow") }
            return .double(Double(single))
        case (.string, .string), (.uri, .string), (.boolean, .bool), (.date, .date), (.binaryData, .bytes),
             (.transformable, .bytes), (.uuid, .uuid):
            return value
        default:
            throw Failure(message: "\(withIndefiniteArticle(value.kindName)) value cannot be stored in an attribute of type \(target.rawValue)")
        }
    }

    static func double(_ value: Value) throws(Failure) -> Double {
        switch value {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .decimal(let text):
            guard let d = Double(text) else { throw Failure(message: "invalid decimal \(text)") }
            return d
        default: throw Failure(message: "\(withIndefiniteArticle(value.kindName)) value is not a number")
        }
    }

    static func decimal(_ value: Value) throws(Failure) -> Decimal {
        switch value {
        case .int(let i): return Decimal(i)
        case .decimal(let text):
            guard let d = decimalNumber(text) else { throw Failure(message: "invalid decimal \(text)") }
            return d
        default: throw Failure(message: "\(withIndefiniteArticle(value.kindName)) value is not a decimal")
        }
    }

    /// Doubles round half to even (rint), decimals half away from zero, as PostgreSQL's casts.
    static func integer(_ value: Value) throws(Failure) -> Int64 {
        switch value {
        case .int(let i):
            return i
        case .double(let d):
            let rounded = d.rounded(.toNearestOrEven)
            guard rounded >= -0x1p63, rounded < 0x1p63 else { throw Failure(message: "bigint out of range") }
            return Int64(rounded)
        case .decimal:
            var number = try decimal(value)
            var rounded = Decimal()
            NSDecimalRound(&rounded, &number, 0, .plain)
            guard let i = Int64(rounded.description) else { throw Failure(message: "bigint out of range") }
            return i
        default:
            throw Failure(message: "\(withIndefiniteArticle(value.kindName)) value is not a number")
        }
    }
}

extension Value {
    /// For messages.
    var kindName: String {
        switch self {
        case .null: "nil"
        case .int: "integer"
        case .double: "double"
        case .decimal: "decimal"
        case .string: "string"
        case .bool: "boolean"
        case .date: "date"
        case .bytes: "binary"
        case .uuid: "UUID"
        }
    }
}
