import Foundation

/// The attribute types of Core Data, by their Xcode names.
public enum AttributeType: String, Sendable, Hashable, CaseIterable, Codable {
    case integer16 = "Integer 16"
    case integer32 = "Integer 32"
    case integer64 = "Integer 64"
    case decimal = "Decimal"
    case double = "Double"
    case float = "Float"
    case string = "String"
    case boolean = "Boolean"
    case date = "Date"
    case binaryData = "Binary Data"
    case uuid = "UUID"
    case uri = "URI"
    case transformable = "Transformable"
    /// Xcode allows it on transient attributes only; such attributes have no column.
    case undefined = "Undefined"

    /// Accepts the Xcode spelling, the spelling in `.xcdatamodel` XML ("Binary") and the short
    /// native spellings (`int16`, `string`, `binary`, …), case-insensitively.
    public init?(spelling: String) {
        let key = spelling.lowercased().replacingOccurrences(of: " ", with: "").replacingOccurrences(of: "_", with: "")
        switch key {
        case "integer16", "int16": self = .integer16
        case "integer32", "int32": self = .integer32
        case "integer64", "int64": self = .integer64
        case "decimal": self = .decimal
        case "double": self = .double
        case "float": self = .float
        case "string": self = .string
        case "boolean", "bool": self = .boolean
        case "date": self = .date
        case "binarydata", "binary", "data": self = .binaryData
        case "uuid": self = .uuid
        case "uri", "url": self = .uri
        case "transformable": self = .transformable
        case "undefined": self = .undefined
        default: return nil
        }
    }

    /// The short name used in native model files.
    public var nativeName: String {
        switch self {
        case .integer16: "int16"
        case .integer32: "int32"
        case .integer64: "int64"
        case .decimal: "decimal"
        case .double: "double"
        case .float: "float"
        case .string: "string"
        case .boolean: "boolean"
        case .date: "date"
        case .binaryData: "binary"
        case .uuid: "uuid"
        case .uri: "uri"
        case .transformable: "transformable"
        case .undefined: "undefined"
        }
    }

    /// The PostgreSQL type of the attribute's column. Part of the store contract.
    public var columnType: String {
        switch self {
        case .integer16: "smallint"
        case .integer32: "integer"
        case .integer64: "bigint"
        case .decimal: "numeric"
        case .double: "double precision"
        case .float: "real"
        case .string, .uri: "text"
        case .boolean: "boolean"
        case .date: "timestamptz"
        case .binaryData, .transformable: "bytea"
        case .uuid: "uuid"
        case .undefined: preconditionFailure("an attribute of undefined type has no column")
        }
    }

    public var isInteger: Bool { self == .integer16 || self == .integer32 || self == .integer64 }
}
