/// How deeply an expression or predicate may nest. The parser, the checker, the SQL compilers,
/// the evaluator and the formatter each recurse once per level of the tree, and a few thousand
/// levels overflow the stack; so the parser refuses deeper text with an error instead.
/// Every operator of a chain is a level (`a + b + c` is two), as are each parenthesis, unary
/// minus, NOT, function call and list. Core Data's own parser gives up far sooner.
public enum ExpressionNesting {
    public static let maximumDepth = 200
}

/// A parsed tree, whose levels `requireDepth` bounds.
protocol NestedTree {
    var depth: Int { get }
}

extension ValueExpression: NestedTree {
    /// Levels of the tree: 1 for a constant, variable or key path.
    var depth: Int {
        switch self {
        case .constant, .variable, .keyPath: 1
        case .negate(let operand): 1 + operand.depth
        case .arithmetic(_, let left, let right): 1 + max(left.depth, right.depth)
        case .builtin(_, let arguments), .list(let arguments): 1 + (arguments.map(\.depth).max() ?? 0)
        case .function(let target, _, let arguments): 1 + max(target.depth, arguments.map(\.depth).max() ?? 0)
        }
    }
}

extension FilterPredicate: NestedTree {
    var depth: Int {
        switch self {
        case .constant: 1
        case .comparison(let comparison): 1 + max(comparison.left.depth, comparison.right.depth)
        case .and(let left, let right), .or(let left, let right): 1 + max(left.depth, right.depth)
        case .not(let operand): 1 + operand.depth
        }
    }
}
