import Foundation

/// JSON with object keys kept in the order given: what the commands print (`--format json`) and
/// what the store's metadata keeps (a version's definition, its hashes).
public indirect enum JSONValue: Sendable {
    case string(String)
    case number(Int)
    /// A number with a fraction (seconds, rates); not finite becomes null, as JSON has no such number.
    case decimal(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    public var rendered: String {
        switch self {
        case .string(let s): return JSONValue.quote(s)
        case .number(let n): return String(n)
        case .decimal(let d): return d.isFinite ? String(d) : "null"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .array(let items): return "[" + items.map(\.rendered).joined(separator: ",") + "]"
        case .object(let fields):
            return "{" + fields.map { JSONValue.quote($0.0) + ":" + $0.1.rendered }.joined(separator: ",") + "}"
        }
    }

    /// A double-quoted string literal: `\\ \" \n \r \t` escaped, other control characters as
    /// `\uXXXX`. The expression syntax reads strings back with the same escapes.
    public static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
