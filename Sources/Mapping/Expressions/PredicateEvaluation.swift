import Foundation

/// Predicates in Swift with NSPredicate's two-valued logic: `==` and `!=` treat nil as a value
/// (nil == nil), every other comparison with nil is false. Strings compare by Unicode scalar,
/// as `COLLATE "C"` does; `[c]` lowercases both sides.
extension ExpressionEvaluator {
    func holds(_ node: TypedPredicate, _ row: Row) throws -> Bool {
        switch node {
        case .constant(let value): return value
        case .and(let left, let right): return try holds(left, row) && holds(right, row)
        case .or(let left, let right): return try holds(left, row) || holds(right, row)
        case .not(let operand): return try !holds(operand, row)
        case .comparison(let comparison): return try holds(comparison, row)
        }
    }

    private func holds(_ c: TypedComparison, _ row: Row) throws -> Bool {
        let left = try value(c.left, row)
        var rights: [Value] = []
        for node in c.right {
            rights.append(try value(node, row))
        }
        let type = commonComparisonType([c.left.type] + c.right.map(\.type))
        switch c.op {
        case .equal:
            return try row.converting { () throws(Conversion.Failure) in try equal(left, rights[0], type, c.isCaseInsensitive) }
        case .notEqual:
            return try row.converting { () throws(Conversion.Failure) in try !equal(left, rights[0], type, c.isCaseInsensitive) }
        case .in:
            guard left != .null else { return false }
            return try row.converting { () throws(Conversion.Failure) in
                for right in rights where try equal(left, right, type, c.isCaseInsensitive) { return true }
                return false
            }
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard left != .null, rights[0] != .null else { return false }
            let order = try row.converting { () throws(Conversion.Failure) in try compare(left, rights[0], type, c.isCaseInsensitive) }
            switch c.op {
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            default: return order >= 0
            }
        case .beginsWith, .endsWith, .contains, .like:
            guard case .string(var text) = left, case .string(var pattern) = rights[0] else { return false }
            if c.isCaseInsensitive { (text, pattern) = (text.lowercased(), pattern.lowercased()) }
            let (t, p) = (Array(text.unicodeScalars), Array(pattern.unicodeScalars))
            switch c.op {
            case .beginsWith: return t.starts(with: p)
            case .endsWith: return t.reversed().starts(with: p.reversed())
            case .contains: return p.isEmpty || (0...max(0, t.count - p.count)).contains { t[$0...].starts(with: p) }
            default: return globMatches(t[...], p[...])
            }
        }
    }

    private func equal(_ left: Value, _ right: Value, _ type: ValueType, _ isCaseInsensitive: Bool) throws(Conversion.Failure) -> Bool {
        if left == .null || right == .null { return left == right }
        return try compare(left, right, type, isCaseInsensitive) == 0
    }

    /// -1, 0 or 1; numbers in the type they meet in.
    private func compare(_ left: Value, _ right: Value, _ type: ValueType, _ isCaseInsensitive: Bool) throws(Conversion.Failure) -> Int {
        func order<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }
        switch (left, right) {
        case (.string(var a), .string(var b)):
            if isCaseInsensitive { (a, b) = (a.lowercased(), b.lowercased()) }
            if a.utf8.elementsEqual(b.utf8) { return 0 }
            return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
        case (.date(let a), .date(let b)):
            return order(a, b)
        case (.bool(let a), .bool(let b)):
            return a == b ? 0 : (a ? 1 : -1)
        case (.bytes(let a), .bytes(let b)):
            return a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
        case (.uuid(let a), .uuid(let b)):
            return a == b ? 0 : (a.uuidString < b.uuidString ? -1 : 1)
        default:
            switch type {
            case .double, .float: return order(try Conversion.double(left), try Conversion.double(right))
            case .decimal: return order(try Conversion.decimal(left), try Conversion.decimal(right))
            default: return order(try Conversion.integer(left), try Conversion.integer(right))
            }
        }
    }
}

/// NSPredicate's LIKE: `*` matches any run of characters, `?` exactly one.
private func globMatches(_ text: ArraySlice<Unicode.Scalar>, _ pattern: ArraySlice<Unicode.Scalar>) -> Bool {
    guard let first = pattern.first else { return text.isEmpty }
    switch first {
    case "*":
        let rest = pattern.dropFirst()
        return (text.startIndex...text.endIndex).contains { globMatches(text[$0...], rest) }
    case "?":
        return !text.isEmpty && globMatches(text.dropFirst(), pattern.dropFirst())
    default:
        return text.first == first && globMatches(text.dropFirst(), pattern.dropFirst())
    }
}
