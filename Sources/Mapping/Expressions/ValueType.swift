import ObjectModel

/// The type of an expression's value, inferred by `ExpressionChecker` from the two models.
public enum ValueType: Sendable, Hashable, CustomStringConvertible {
    case integer16
    case integer32
    case integer64
    case decimal
    case float
    case double
    case string
    case boolean
    case date
    case binary
    case uuid
    /// The `nil` constant: fits any optional attribute.
    case null
    /// A policy function's result: known only when it runs.
    case unknown

    /// The type of an attribute's values; nil for attributes without stored values (undefined).
    /// URIs are strings and transformables are bytes, as they are stored.
    public init?(_ type: AttributeType) {
        switch type {
        case .integer16: self = .integer16
        case .integer32: self = .integer32
        case .integer64: self = .integer64
        case .decimal: self = .decimal
        case .double: self = .double
        case .float: self = .float
        case .string, .uri: self = .string
        case .boolean: self = .boolean
        case .date: self = .date
        case .binaryData, .transformable: self = .binary
        case .uuid: self = .uuid
        case .undefined: return nil
        }
    }

    /// The type of a constant.
    init(of value: Value) {
        switch value {
        case .null: self = .null
        case .int: self = .integer64
        case .double: self = .double
        case .decimal: self = .decimal
        case .string: self = .string
        case .bool: self = .boolean
        case .date: self = .date
        case .bytes: self = .binary
        case .uuid: self = .uuid
        }
    }

    public var isInteger: Bool { self == .integer16 || self == .integer32 || self == .integer64 }
    public var isFloatingPoint: Bool { self == .float || self == .double }
    public var isNumeric: Bool { isInteger || isFloatingPoint || self == .decimal }

    public var description: String {
        switch self {
        case .integer16: "Integer 16"
        case .integer32: "Integer 32"
        case .integer64: "Integer 64"
        case .decimal: "Decimal"
        case .float: "Float"
        case .double: "Double"
        case .string: "String"
        case .boolean: "Boolean"
        case .date: "Date"
        case .binary: "Binary Data"
        case .uuid: "UUID"
        case .null: "nil"
        case .unknown: "a policy function's result"
        }
    }

    /// The type two numbers are combined in: Double when either is floating point, else
    /// Decimal when either is decimal, else Integer 64. Division always gives Double, as
    /// NSExpression's `divide:by:` does.
    static func arithmetic(_ op: ArithmeticOperator, _ left: ValueType, _ right: ValueType) -> ValueType {
        if op == .divide || left.isFloatingPoint || right.isFloatingPoint { return .double }
        if left == .decimal || right == .decimal { return .decimal }
        return .integer64
    }

    /// Whether a value of this type can be stored in an attribute of `type` without losing
    /// more than precision: integers go into any number (out-of-range values fail when they
    /// are stored, on both paths), decimals and floating point into any non-integer number,
    /// strings into strings and URIs, and other types only into their own.
    public func isAssignable(to type: AttributeType) -> Bool {
        switch self {
        case .null, .unknown:
            return type != .undefined
        case .integer16, .integer32, .integer64:
            return type.isInteger || [.decimal, .float, .double].contains(type)
        case .decimal, .float, .double:
            return [.decimal, .float, .double].contains(type)
        case .string:
            return type == .string || type == .uri
        case .boolean:
            return type == .boolean
        case .date:
            return type == .date
        case .binary:
            return type == .binaryData || type == .transformable
        case .uuid:
            return type == .uuid
        }
    }

    /// "a Double value", "an Integer 32 value".
    var withArticle: String { withIndefiniteArticle(description) }

    /// Whether `==` and `!=` can compare the two.
    func isEquatable(with other: ValueType) -> Bool {
        if self == .null || other == .null { return true }
        if isNumeric && other.isNumeric { return true }
        return self == other
    }

    /// Whether `<`, `<=`, `>`, `>=` can compare the two.
    func isOrderable(with other: ValueType) -> Bool {
        if isNumeric && other.isNumeric { return true }
        return self == other && (self == .string || self == .date)
    }
}

/// "an integer", "a UUID": by the first letter's sound, which for our nouns is its vowel-ness
/// except U (UUID, URI).
func withIndefiniteArticle(_ noun: String) -> String {
    let startsWithVowelSound = noun.first.map { "aeioAEIO".contains($0) } ?? false
    return (startsWithVowelSound ? "an " : "a ") + noun
}
