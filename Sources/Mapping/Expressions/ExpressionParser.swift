import Foundation

/// Parses value expressions (NSExpression's format syntax) and filter predicates (NSPredicate's
/// format syntax); the grammar is in docs/mapping-format.md. Keywords are case-insensitive;
/// variable, property and function names are not.
public enum ExpressionParser {
    public static func parseExpression(_ text: String) throws(ExpressionError) -> ValueExpression {
        var parser = try Parser(text: text, bareKeyPathsReferToSource: false)
        let expression = try parser.expression()
        try parser.expectEnd("expression")
        return expression
    }

    /// Bare key paths refer to the source object: `amount > 100` is `$source.amount > 100`.
    public static func parsePredicate(_ text: String) throws(ExpressionError) -> FilterPredicate {
        var parser = try Parser(text: text, bareKeyPathsReferToSource: true)
        let predicate = try parser.predicate()
        try parser.expectEnd("predicate")
        return predicate
    }
}

/// Reserved words that are operators: where an operand is expected they are a mistake, not a name.
let operatorWords: Set<String> = ["AND", "OR", "NOT", "IN", "LIKE", "CONTAINS", "BEGINSWITH", "ENDSWITH"]

/// NSPredicate features we do not translate: aggregates over to-many paths and the like.
let unsupportedWords: Set<String> = ["ANY", "ALL", "SOME", "NONE", "SUBQUERY", "FETCH", "SELF", "ANYKEY", "MATCHES", "BETWEEN", "TERNARY"]

/// Recursive descent over the tokens; one method per grammar rule: arithmetic and operands in
/// ExpressionParser+Operands.swift, function calls and casts below,
/// predicates in PredicateParser.swift.
///
///     expression := term (('+' | '-') term)*
///     term       := unary (('*' | '/') unary)*
///     unary      := '-' unary | primary
///     primary    := number | string | nil | YES | NO | '$'variable ('.' name)*
///                 | '(' expression ')' | '{' [expression (',' expression)*] '}'
///                 | FUNCTION '(' expression ',' string (',' expression)* ')'
///                 | selector '(' arguments ')' | CAST '(' number ',' "NSDate" ')'
///                 | name ('.' name)*            (predicates only: a key path of $source)
///     name       := identifier | '#'identifier  (a reserved word needs the '#')
struct Parser {
    let text: String
    let tokens: [Token]
    var position = 0
    /// Rules entered and not yet left (`ExpressionNesting`).
    var level = 0
    let bareKeyPathsReferToSource: Bool

    init(text: String, bareKeyPathsReferToSource: Bool) throws(ExpressionError) {
        self.text = text
        self.tokens = try Lexer.tokens(of: text)
        self.bareKeyPathsReferToSource = bareKeyPathsReferToSource
    }

    var current: Token { tokens[position] }

    mutating func advance() -> Token {
        let token = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    func error(_ message: String, at token: Token) -> ExpressionError {
        ExpressionError(text: text, column: token.column, message: message)
    }

    /// "expected X" with what was found instead, unless the text ended.
    func expected(_ what: String) -> ExpressionError {
        if current.kind == .end { return error("expected \(what)", at: current) }
        return error("expected \(what), found '\(current.text)'", at: current)
    }

    mutating func expectSymbol(_ symbol: String) throws(ExpressionError) {
        guard current.isSymbol(symbol) else { throw expected("'\(symbol)'") }
        _ = advance()
    }

    func expectEnd(_ what: String) throws(ExpressionError) {
        guard current.kind == .end else { throw error("expected end of \(what), found '\(current.text)'", at: current) }
    }
}

extension Parser {
    /// Called on entering each rule that recurses (a parenthesis, an argument list, unary minus,
    /// NOT), paired with `leaveLevel()`: bounds the parser's own recursion, which parentheses
    /// deepen without adding tree levels.
    mutating func enterLevel() throws(ExpressionError) {
        level += 1
        try requireDepth(level)
    }

    mutating func leaveLevel() {
        level -= 1
    }

    /// Bounds the tree being built, which chains of operators deepen without recursion.
    func requireDepth(_ depth: Int) throws(ExpressionError) {
        guard depth <= ExpressionNesting.maximumDepth else {
            throw error("nested more than \(ExpressionNesting.maximumDepth) levels deep (each operator, parenthesis, function call and list is a level)", at: current)
        }
    }

    /// `operand (operator operand)*`, folded to the left (`a - b - c` is `(a - b) - c`): the
    /// loop of every binary rule. `join` reads the operator at a token and gives the node it
    /// makes of the two sides, nil where the chain ends. A chain deepens the tree without
    /// recursing, so the depth is checked as it grows.
    mutating func chain<Tree: NestedTree>(
        of operand: (inout Parser) throws(ExpressionError) -> Tree,
        joinedBy join: (Token) -> ((Tree, Tree) -> Tree)?
    ) throws(ExpressionError) -> Tree {
        var result = try operand(&self)
        var depth = result.depth
        try requireDepth(depth)
        while let combine = join(current) {
            _ = advance()
            let right = try operand(&self)
            depth = 1 + max(depth, right.depth)
            try requireDepth(depth)
            result = combine(result, right)
        }
        return result
    }
}

/// Calls: built-in functions, `FUNCTION(…)` and the one supported `CAST`.
extension Parser {
    /// `uppercase:(x)`, `now()`, `add:to:(a, b)`.
    mutating func builtinCall(selector: String, at token: Token) throws(ExpressionError) -> ValueExpression {
        guard current.isSymbol("(") else { throw expected("'(' after \(selector)") }
        _ = advance()
        let args = try arguments(closing: ")")
        if let call = ValueExpression.builtinCall(selector: selector, arguments: args) { return call }
        if let function = BuiltinFunction(rawValue: selector) {
            throw error("\(function.rawValue) takes \(countText(function.arity)), \(args.count) given", at: token)
        }
        let supported = BuiltinFunction.allCases.map { $0 == .now ? "now()" : $0.rawValue }
        throw error("unknown function \(selector); supported: \(supported.joined(separator: ", "))", at: token)
    }

    /// A comma-separated list up to `closing`, which is consumed; `(` or `{` is already consumed.
    mutating func arguments(closing: String) throws(ExpressionError) -> [ValueExpression] {
        var result: [ValueExpression] = []
        if current.isSymbol(closing) {
            _ = advance()
            return result
        }
        while true {
            result.append(try expression())
            if current.isSymbol(closing) {
                _ = advance()
                return result
            }
            guard current.isSymbol(",") else { throw expected("',' or '\(closing)'") }
            _ = advance()
        }
    }

    /// `FUNCTION(target, "selector:", arguments…)`; `valueForKey:`/`valueForKeyPath:` on a
    /// variable become key paths, as archived expressions spell `$source.name`.
    mutating func function(at token: Token) throws(ExpressionError) -> ValueExpression {
        try expectSymbol("(")
        let target = try expression()
        try expectSymbol(",")
        let selectorToken = current
        guard case .string(let selector) = selectorToken.kind else { throw expected("a selector string") }
        _ = advance()
        var args: [ValueExpression] = []
        while current.isSymbol(",") {
            _ = advance()
            args.append(try expression())
        }
        try expectSymbol(")")
        let colons = selector.filter { $0 == ":" }.count
        guard colons == args.count else {
            throw error("selector \"\(selector)\" takes \(countText(colons)), \(args.count) given", at: selectorToken)
        }
        if selector == "valueForKey:" || selector == "valueForKeyPath:", case .constant(.string(let path)) = args[0] {
            let components = selector == "valueForKey:" ? [path] : path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if components.contains(where: \.isEmpty) { throw error("empty key path \"\(path)\"", at: selectorToken) }
            switch target {
            case .variable(let variable): return .keyPath(variable, components)
            case .keyPath(let variable, let prefix): return .keyPath(variable, prefix + components)
            default: break
            }
        }
        return .function(target: target, selector: selector, arguments: args)
    }

    /// `CAST(seconds, "NSDate")`: a date, in seconds since 2001-01-01 UTC, as archived date
    /// constants are written. Other casts are not supported.
    mutating func dateCast(at token: Token) throws(ExpressionError) -> ValueExpression {
        try expectSymbol("(")
        var sign = 1.0
        if current.isSymbol("-") {
            sign = -1
            _ = advance()
        }
        let seconds: Double
        switch current.kind {
        case .integer(let value): seconds = Double(value)
        case .double(let value): seconds = value
        default: throw expected("a number of seconds since 2001-01-01 in CAST(…, \"NSDate\")")
        }
        _ = advance()
        try expectSymbol(",")
        guard case .string("NSDate") = current.kind else {
            throw error("only CAST(<seconds since 2001-01-01>, \"NSDate\") is supported", at: token)
        }
        _ = advance()
        try expectSymbol(")")
        return .constant(.date(Date(timeIntervalSinceReferenceDate: sign * seconds)))
    }

    func countText(_ n: Int) -> String {
        n == 1 ? "1 argument" : "\(n) arguments"
    }
}
