import SQLBuilding

/// Predicates to SQL. NSPredicate's logic is two-valued: a comparison with a missing value is
/// false, so `NOT (amount > 100)` holds for a row without an amount. In SQL that comparison
/// is NULL, which WHERE already treats as false; under an odd number of NOTs it is wrapped in
/// `COALESCE(…, false)` so that NOT turns it into true.
extension SQLExpressionCompiler {
    func predicate(_ node: TypedPredicate, isNegated: Bool) -> SQL {
        switch node {
        case .constant(let value):
            return value ? "true" : "false"
        case .and(let left, let right):
            return "(\(predicate(left, isNegated: isNegated)) AND \(predicate(right, isNegated: isNegated)))"
        case .or(let left, let right):
            return "(\(predicate(left, isNegated: isNegated)) OR \(predicate(right, isNegated: isNegated)))"
        case .not(let operand):
            return "(NOT \(predicate(operand, isNegated: !isNegated)))"
        case .comparison(let comparison):
            let (sql, isNullSafe) = self.comparison(comparison)
            return isNegated && !isNullSafe ? "COALESCE(\(sql), false)" : sql
        }
    }

    /// The comparison, and whether it can never be NULL.
    private func comparison(_ c: TypedComparison) -> (SQL, Bool) {
        let foldCase: (SQL) -> SQL = { c.isCaseInsensitive ? "lower(\($0))" : $0 }
        switch c.op {
        case .equal, .notEqual:
            let isEqual = c.op == .equal
            if let operand = nullComparedOperand(c) {
                return ("(\(value(operand)) \(unsafeRaw: isEqual ? "IS NULL" : "IS NOT NULL"))", true)
            }
            let (left, right) = operands(c.left, c.right[0])
            if !isEqual || (!c.left.isNonNullConstant && !c.right[0].isNonNullConstant) {
                let op = isEqual ? "IS NOT DISTINCT FROM" : "IS DISTINCT FROM"
                return ("(\(foldCase(left)) \(unsafeRaw: op) \(foldCase(right)))", true)
            }
            return ("(\(foldCase(left)) = \(foldCase(right)))", false)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            var (left, right) = operands(c.left, c.right[0])
            (left, right) = (foldCase(left), foldCase(right))
            if c.left.type == .string { left = "\(left) COLLATE \"C\"" }
            return ("(\(left) \(unsafeRaw: c.op.rawValue) \(right))", false)
        case .beginsWith, .endsWith, .contains, .like:
            guard case .constant(.string(let text), _) = c.right[0] else {
                preconditionFailure("the checker allows only a string constant on the right of \(c.op.rawValue)")
            }
            let pattern = likePattern(text, for: c.op)
            return ("(\(value(c.left)) \(unsafeRaw: c.isCaseInsensitive ? "ILIKE" : "LIKE") \(literal: pattern))", false)
        case .in:
            let type = commonComparisonType([c.left.type] + c.right.map(\.type))
            var left = value(c.left)
            if type == .double, pgType(of: c.left) != .double { left = "\(left)::double precision" }
            let items = SQL.joined(c.right.map { foldCase(value($0)) }, separator: ", ")
            return ("(\(foldCase(left)) IN (\(items)))", false)
        }
    }

    /// Numeric operands cast to the type they are compared in.
    private func operands(_ left: TypedNode, _ right: TypedNode) -> (SQL, SQL) {
        numericOperands(left, right, in: commonComparisonType([left.type, right.type]), isArithmetic: false)
    }

    /// The other side of a comparison with the `nil` constant.
    private func nullComparedOperand(_ c: TypedComparison) -> TypedNode? {
        if case .constant(.null, _) = c.right[0] { return c.left }
        if case .constant(.null, _) = c.left { return c.right[0] }
        return nil
    }

    /// NSPredicate's patterns in LIKE's syntax: `%` and `_` and the escape `\` in the text are
    /// escaped; for LIKE, `*` and `?` become `%` and `_`.
    private func likePattern(_ text: String, for op: ComparisonOperator) -> String {
        var escaped = ""
        for c in text {
            switch c {
            case "\\", "%", "_": escaped += "\\" + String(c)
            case "*" where op == .like: escaped += "%"
            case "?" where op == .like: escaped += "_"
            default: escaped.append(c)
            }
        }
        switch op {
        case .beginsWith: return escaped + "%"
        case .endsWith: return "%" + escaped
        case .contains: return "%" + escaped + "%"
        default: return escaped
        }
    }
}

/// The type compared values meet in: Double when any is floating point, else Decimal when any
/// is decimal, else Integer 64 for integers; other types compare as themselves.
func commonComparisonType(_ types: [ValueType]) -> ValueType {
    let numbers = types.filter(\.isNumeric)
    guard numbers.count == types.count, let first = numbers.first else { return types.first { $0 != .null } ?? .null }
    return numbers.dropFirst().reduce(first) { ValueType.arithmetic(.add, $0, $1) }
}

extension TypedNode {
    /// A constant other than nil, possibly negated: never NULL in SQL.
    var isNonNullConstant: Bool {
        switch self {
        case .constant(let value, _): value != .null
        case .negate(let operand, _): operand.isNonNullConstant
        default: false
        }
    }
}
