import Foundation

/// Arithmetic on values in the type the checker chose, as PostgreSQL computes it: bigint with
/// overflow errors, numeric exactly, double precision with errors for division by zero and
/// overflow. A NULL operand gives NULL.
enum Arithmetic {
    static func apply(_ op: ArithmeticOperator, _ left: Value, _ right: Value, in type: ValueType) throws(Conversion.Failure) -> Value {
        if left == .null || right == .null { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            let (l, r) = (try Conversion.integer(left), try Conversion.integer(right))
            let (result, overflow) = switch op {
            case .add: l.addingReportingOverflow(r)
            case .subtract: l.subtractingReportingOverflow(r)
            case .multiply: l.multipliedReportingOverflow(by: r)
            case .divide: preconditionFailure("division is always Double")
            }
            guard !overflow else { throw Conversion.Failure(message: "bigint out of range") }
            return .int(result)
        case .decimal:
            let (l, r) = (try Conversion.decimal(left), try Conversion.decimal(right))
            let result: Decimal = switch op {
            case .add: l + r
            case .subtract: l - r
            case .multiply: l * r
            case .divide: preconditionFailure("division is always Double")
            }
            guard !result.isNaN else { throw Conversion.Failure(message: "value overflows numeric format") }
            return .decimal(result.description)
        default:
            let (l, r) = (try Conversion.double(left), try Conversion.double(right))
            if op == .divide, r == 0 { throw Conversion.Failure(message: "division by zero") }
            let result = switch op {
            case .add: l + r
            case .subtract: l - r
            case .multiply: l * r
            case .divide: l / r
            }
            guard result.isFinite || !l.isFinite || !r.isFinite else { throw Conversion.Failure(message: "value out of range: overflow") }
            return .double(result)
        }
    }

    static func negate(_ value: Value, in type: ValueType) throws(Conversion.Failure) -> Value {
        switch value {
        case .null: return .null
        case .int(let i):
            guard i != .min else { throw Conversion.Failure(message: "bigint out of range") }
            return .int(-i)
        case .double(let d): return .double(-d)
        case .decimal: return .decimal((-(try Conversion.decimal(value))).description)
        default: throw Conversion.Failure(message: "cannot negate \(withIndefiniteArticle(value.kindName)) value")
        }
    }
}
