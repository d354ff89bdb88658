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
private let operatorWords: Set<String> = ["AND", "OR", "NOT", "IN", "LIKE", "CONTAINS", "BEGINSWITH", "ENDSWITH"]

/// NSPredicate features we do not translate: aggregates over to-many paths and the like.
let unsupportedWords: Set<String> = ["ANY", "ALL", "SOME", "NONE", "SUBQUERY", "FETCH", "SELF", "ANYKEY", "MATCHES", "BETWEEN", "TERNARY"]

/// Recursive descent over the tokens; one method per grammar rule (predicates in
/// PredicateParser.swift):
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

    // MARK: Expressions

    /// additive := multiplicative (('+' | '-') multiplicative)*
    mutating func expression() throws(ExpressionError) -> ValueExpression {
        try enterLevel()
        defer { leaveLevel() }
        var result = try multiplicative()
        var depth = result.depth
        try requireDepth(depth)
        while let op = arithmeticOperator(among: [.add, .subtract]) {
            _ = advance()
            let right = try multiplicative()
            depth = 1 + max(depth, right.depth)
            try requireDepth(depth)
            result = .arithmetic(op, result, right)
        }
        return result
    }

    /// multiplicative := unary (('*' | '/') unary)*
    private mutating func multiplicative() throws(ExpressionError) -> ValueExpression {
        var result = try unary()
        var depth = result.depth
        try requireDepth(depth)
        while let op = arithmeticOperator(among: [.multiply, .divide]) {
            _ = advance()
            let right = try unary()
            depth = 1 + max(depth, right.depth)
            try requireDepth(depth)
            result = .arithmetic(op, result, right)
        }
        if current.isSymbol("**") { throw error("'**' (raise:toPower:) is not supported", at: current) }
        return result
    }

    private func arithmeticOperator(among candidates: [ArithmeticOperator]) -> ArithmeticOperator? {
        candidates.first { current.isSymbol($0.rawValue) }
    }

    /// unary := '-' unary | primary
    private mutating func unary() throws(ExpressionError) -> ValueExpression {
        if current.isSymbol("-") {
            try enterLevel()
            defer { leaveLevel() }
            _ = advance()
            return .negate(try unary())
        }
        return try primary()
    }

    private mutating func primary() throws(ExpressionError) -> ValueExpression {
        let token = current
        switch token.kind {
        case .integer(let value):
            _ = advance()
            return .constant(.int(value))
        case .double(let value):
            _ = advance()
            return .constant(.double(value))
        case .string(let value):
            _ = advance()
            return .constant(.string(value))
        case .variable(let name):
            _ = advance()
            guard let variable = Variable(rawValue: name) else { throw unknownVariable(name, at: token) }
            let path = try keyPathTail()
            return path.isEmpty ? .variable(variable) : .keyPath(variable, path)
        case .selector(let selector):
            _ = advance()
            return try builtinCall(selector: selector, at: token)
        case .identifier(let name, let isEscaped):
            return try identifier(name, isEscaped: isEscaped, token: token)
        case .symbol("("):
            _ = advance()
            let inner = try expression()
            try expectSymbol(")")
            return inner
        case .symbol("{"):
            _ = advance()
            return .list(try arguments(closing: "}"))
        default:
            throw expected("an operand")
        }
    }

    private mutating func identifier(_ name: String, isEscaped: Bool, token: Token) throws(ExpressionError) -> ValueExpression {
        if !isEscaped {
            switch name.uppercased() {
            case "NIL", "NULL":
                _ = advance()
                return .constant(.null)
            case "YES", "TRUE":
                _ = advance()
                return .constant(.bool(true))
            case "NO", "FALSE":
                _ = advance()
                return .constant(.bool(false))
            case "FUNCTION":
                _ = advance()
                return try function(at: token)
            case "CAST":
                _ = advance()
                return try dateCast(at: token)
            default:
                break
            }
            let word = name.uppercased()
            if unsupportedWords.contains(word) { throw error("\(word) is not supported", at: token) }
            if operatorWords.contains(word) { throw expected("an operand") }
            if tokens[position + 1].isSymbol("(") {
                _ = advance()
                return try builtinCall(selector: name, at: token)
            }
            if reservedWords.contains(word) {
                throw error("'\(name)' is a reserved word: escape it as #\(name)", at: token)
            }
        }
        guard bareKeyPathsReferToSource else {
            throw error("a key path starts with a variable: write $source.\(isEscaped ? "#" : "")\(name)", at: token)
        }
        _ = advance()
        return .keyPath(.source, [name] + (try keyPathTail()))
    }

    private func unknownVariable(_ name: String, at token: Token) -> ExpressionError {
        let all = Variable.allCases.map { "$" + $0.rawValue }
        if let close = Variable.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) {
            return error("unknown variable $\(name) (did you mean $\(close.rawValue)?)", at: token)
        }
        return error("unknown variable $\(name); the variables are \(all.joined(separator: ", "))", at: token)
    }

    /// ('.' name)*, where a reserved word needs its `#` escape.
    private mutating func keyPathTail() throws(ExpressionError) -> [String] {
        var path: [String] = []
        while current.isSymbol(".") {
            _ = advance()
            guard case .identifier(let name, let isEscaped) = current.kind else { throw expected("a property name after '.'") }
            if !isEscaped, reservedWords.contains(name.uppercased()) {
                throw error("'\(name)' is a reserved word: escape it as #\(name)", at: current)
            }
            path.append(name)
            _ = advance()
        }
        return path
    }

    /// `uppercase:(x)`, `now()`, `add:to:(a, b)`.
    private mutating func builtinCall(selector: String, at token: Token) throws(ExpressionError) -> ValueExpression {
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
    private mutating func arguments(closing: String) throws(ExpressionError) -> [ValueExpression] {
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
    private mutating func function(at token: Token) throws(ExpressionError) -> ValueExpression {
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
    private mutating func dateCast(at token: Token) throws(ExpressionError) -> ValueExpression {
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

    private func countText(_ n: Int) -> String {
        n == 1 ? "1 argument" : "\(n) arguments"
    }
}
