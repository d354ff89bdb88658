/// A filter predicate in NSPredicate's format syntax, as parsed by `ExpressionParser`. Bare key
/// paths in the text (`amount > 100`) are stored as `$source` key paths.
public indirect enum FilterPredicate: Sendable, Hashable {
    /// `TRUEPREDICATE`, `FALSEPREDICATE`.
    case constant(Bool)
    case comparison(Comparison)
    case and(FilterPredicate, FilterPredicate)
    case or(FilterPredicate, FilterPredicate)
    case not(FilterPredicate)
}

/// `left op[c] right`.
public struct Comparison: Sendable, Hashable {
    public var left: ValueExpression
    public var op: ComparisonOperator
    public var right: ValueExpression
    /// The `[c]` modifier.
    public var isCaseInsensitive: Bool

    public init(_ left: ValueExpression, _ op: ComparisonOperator, _ right: ValueExpression, isCaseInsensitive: Bool = false) {
        self.left = left
        self.op = op
        self.right = right
        self.isCaseInsensitive = isCaseInsensitive
    }
}

public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    /// NSPredicate's LIKE: `*` matches any run of characters, `?` one character.
    case like = "LIKE"
    /// Membership in a list: `status IN {1, 2}`.
    case `in` = "IN"

    var isOrdering: Bool { [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(self) }
    var isStringMatch: Bool { [.beginsWith, .endsWith, .contains, .like].contains(self) }
}
