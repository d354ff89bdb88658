import Foundation
import ObjectModel
import SQLBuilding

/// Compiles checked expressions and predicates to PostgreSQL expressions over the source row,
/// for the set-based path (`INSERT … SELECT <expressions> FROM <source> AS "s" … WHERE
/// <filter>`). Identifiers are quoted, constants are inline literals, and every operation is
/// parenthesized, so the text is exact and can be pinned in tests.
///
/// The SQL computes what `ExpressionEvaluator` computes: integer arithmetic in `bigint`,
/// Double arithmetic in `double precision` (a Float column is widened first), Decimal
/// arithmetic in `numeric`, string ordering by code point (`COLLATE "C"`), and predicates with
/// NSPredicate's two-valued logic (a comparison with a missing value is false, also under NOT).
public struct SQLExpressionCompiler: Sendable {
    /// The alias of the source table in the statement.
    public var sourceAlias: String
    /// The alias under which the caller joins the row at the end of a to-one path, one of
    /// `CheckedExpression.joins`: `LEFT JOIN <table> AS <alias> ON …`.
    public var joinAlias: @Sendable ([String]) -> String

    public init(sourceAlias: String, joinAlias: (@Sendable ([String]) -> String)? = nil) {
        self.sourceAlias = sourceAlias
        self.joinAlias = joinAlias ?? { SQLExpressionCompiler.defaultJoinAlias(sourceAlias: sourceAlias, path: $0) }
    }

    /// `s.chef`, `s.app.source`: the source alias and the relationship names, shortened to
    /// PostgreSQL's identifier limit like every store name.
    public static func defaultJoinAlias(sourceAlias: String, path: [String]) -> String {
        StoreNaming.shortened(([sourceAlias] + path).joined(separator: "."))
    }

    /// The value expression; nil when it needs Swift (a policy function).
    public func compile(_ checked: CheckedExpression) -> SQL? {
        checked.needsSwift ? nil : value(checked.node)
    }

    /// The filter as a boolean expression for WHERE. Filters never need Swift.
    public func compile(_ checked: CheckedPredicate) -> SQL {
        predicate(checked.node, isNegated: false)
    }

    /// The column of a source attribute, through its join alias when it is behind to-one
    /// relationships.
    public func column(_ reference: AttributeReference) -> SQL {
        let alias = reference.relationships.isEmpty ? sourceAlias : joinAlias(reference.relationships)
        return "\(ident: alias, reference.columnName)"
    }

    // MARK: Values

    func value(_ node: TypedNode) -> SQL {
        switch node {
        case .constant(let constant, _):
            return literal(constant)
        case .attribute(let reference, _):
            return column(reference)
        case .negate(let operand, let type):
            let inner = type.isInteger && pgType(of: operand) != .bigint ? cast(value(operand), .bigint) : value(operand)
            return "(-\(inner))"
        case .arithmetic(let op, let left, let right, let type):
            let (leftSQL, rightSQL) = numericOperands(left, right, in: type, isArithmetic: true)
            return "(\(leftSQL) \(unsafeRaw: op.rawValue) \(rightSQL))"
        case .builtin(let function, let arguments, _):
            let args = arguments.map(value)
            switch function {
            case .uppercase: return "upper(\(args[0]))"
            case .lowercase: return "lower(\(args[0]))"
            case .abs: return "abs(\(args[0]))"
            case .length: return "char_length(\(args[0]))"
            case .trim: return "btrim(\(args[0]), \(unsafeRaw: trimCharactersLiteral))"
            case .now: return "now()"
            }
        case .function:
            preconditionFailure("a policy function has no SQL; check needsSwift first")
        }
    }

    /// Both operands of an arithmetic operation or a comparison, cast so that PostgreSQL
    /// computes in `type` as Swift does: bigint for integers (arithmetic only: comparisons
    /// cannot overflow), double precision for floating point. Casting one operand is enough;
    /// PostgreSQL widens the other.
    func numericOperands(_ left: TypedNode, _ right: TypedNode, in type: ValueType, isArithmetic: Bool) -> (SQL, SQL) {
        var leftSQL = value(left)
        let rightSQL = value(right)
        let (leftType, rightType) = (pgType(of: left), pgType(of: right))
        if type == .integer64, isArithmetic, leftType != .bigint, rightType != .bigint {
            leftSQL = cast(leftSQL, .bigint)
        } else if type == .double, leftType != .double, rightType != .double {
            leftSQL = cast(leftSQL, .doublePrecision)
        }
        return (leftSQL, rightSQL)
    }

    /// The types an operand is cast to, so that PostgreSQL computes as Swift does.
    private enum Cast: String {
        case bigint
        case doublePrecision = "double precision"
    }

    private func cast(_ sql: SQL, _ type: Cast) -> SQL {
        "\(sql)::\(unsafeRaw: type.rawValue)"
    }

    /// The PostgreSQL type a compiled node has, as far as the casts above care.
    enum PGType {
        case smallint, integer, bigint, numeric, real, double, other
    }

    func pgType(of node: TypedNode) -> PGType {
        switch node {
        case .constant(let value, _):
            switch value {
            case .int(let i): return Int64(Int32.min)...Int64(Int32.max) ~= i ? .integer : .bigint
            case .double, .decimal: return .numeric
            default: return .other
            }
        case .attribute(_, let type), .negate(_, let type), .arithmetic(_, _, _, let type), .builtin(_, _, let type):
            if case .negate(let operand, _) = node, !type.isInteger { return pgType(of: operand) }
            if case .builtin(.abs, let arguments, _) = node { return pgType(of: arguments[0]) }
            switch type {
            case .integer16: return .smallint
            case .integer32: return .integer
            case .integer64: return .bigint
            case .decimal: return .numeric
            case .float: return .real
            case .double: return .double
            default: return .other
            }
        case .function:
            return .other
        }
    }

    /// An inline literal. Negative numbers are parenthesized so that `-` never meets `-`
    /// (`--` starts a comment).
    func literal(_ value: Value) -> SQL {
        switch value {
        case .null: return "NULL"
        case .int(let i): return i < 0 ? "(\(literal: i))" : "\(literal: i)"
        case .double(let d): return number(SQLNumber(d))
        case .decimal(let text):
            guard let decimal = SQLNumber(text) else { preconditionFailure("decimal constant '\(text)' is not a number: build it with Value.decimal(normalizing:)") }
            return number(decimal)
        case .string(let s): return "\(literal: s)"
        case .bool(let b): return b ? "true" : "false"
        case .date(let date): return "to_timestamp(\(literal: date.timeIntervalSince1970))"
        case .bytes(let bytes): return "\(literal: SQLValue.bytes(bytes).textRepresentation ?? "")::bytea"
        case .uuid(let uuid): return "\(literal: uuid.uuidString.lowercased())::uuid"
        }
    }

    private func number(_ number: SQLNumber) -> SQL {
        number.isNegative ? "(\(literal: number))" : "\(literal: number)"
    }
}

/// The characters `trim:` removes, as `ExpressionEvaluator` does: space, tab, newline, return.
private let trimCharactersLiteral = "E' \\t\\n\\r'"
