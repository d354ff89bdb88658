import Foundation
import ObjectModel
import SQLBuilding

/// The PostgreSQL type of each attribute type. Part of the store contract.
public enum ColumnTypes {
    public static func sqlType(for type: AttributeType) -> String {
        type.columnType
    }

    /// The DEFAULT expression for a parsed default, as SQL text made of a quoted literal.
    public static func defaultExpression(_ value: DefaultValue, type: AttributeType) -> String {
        switch value {
        case .integer(let i): return String(i)
        case .decimal(let text): return quoteLiteral(text) + "::numeric"
        case .double(let d): return quoteLiteral(String(d)) + "::" + sqlType(for: type)
        case .string(let s): return quoteLiteral(s)
        case .boolean(let b): return b ? "true" : "false"
        case .date(let date):
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return quoteLiteral(formatter.string(from: date)) + "::timestamptz"
        case .uuid(let uuid): return quoteLiteral(uuid.uuidString.lowercased()) + "::uuid"
        }
    }

    /// The delete rule as a foreign key's ON DELETE action.
    public static func onDeleteAction(_ rule: DeleteRule) -> String {
        switch rule {
        case .nullify: "SET NULL"
        case .cascade: "CASCADE"
        case .deny: "RESTRICT"
        case .noAction: "NO ACTION"
        }
    }
}
