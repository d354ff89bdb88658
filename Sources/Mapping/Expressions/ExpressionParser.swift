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
/// ExpressionParser+Operands.swift, function calls and casts in ExpressionParser+Calls.swift,
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
