import Foundation
import ObjectModel
import SQLBuilding

/// The PostgreSQL type of each attribute type. Part of the store contract.
public enum ColumnTypes {
    public static func sqlType(for type: AttributeType) -> String {
        type.columnType
    }

    /// The DEFAULT expression of a parsed default for an attribute of `type`.
    public static func defaultExpression(_ value: DefaultValue, type: AttributeType) -> SQL {
        defaultExpression(value, columnType: sqlType(for: type))
    }

    /// The DEFAULT expression of a parsed default in a column of `columnType` (one of
    /// `sqlType(for:)`'s), made of one inline literal and a cast.
    public static func defaultExpression(_ value: DefaultValue, columnType: String) -> SQL {
        switch value {
        case .integer(let i): return "\(literal: i)"
        case .decimal(let text): return "\(literal: text)::numeric"
        case .double(let d): return "\(literal: String(d))::\(unsafeRaw: columnType)"
        case .string(let s): return "\(literal: s)"
        case .boolean(let b): return b ? "true" : "false"
        case .date(let date):
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return "\(literal: formatter.string(from: date))::timestamptz"
        case .uuid(let uuid): return "\(literal: uuid.uuidString.lowercased())::uuid"
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
