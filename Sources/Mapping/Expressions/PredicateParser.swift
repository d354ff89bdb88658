/// The predicate rules of the parser:
///
///     predicate  := and (('OR' | '||') and)*
///     and        := not (('AND' | '&&') not)*
///     not        := ('NOT' | '!') not | primary
///     primary    := TRUEPREDICATE | FALSEPREDICATE | '(' predicate ')' | comparison
///     comparison := expression operator ['[c]'] expression
extension Parser {
    mutating func predicate() throws(ExpressionError) -> FilterPredicate {
        try enterLevel()
        defer { leaveLevel() }
        return try chain(
            of: { (parser: inout Parser) throws(ExpressionError) in try parser.conjunction() },
            joinedBy: Self.logical("OR", "||", FilterPredicate.or)
        )
    }

    private mutating func conjunction() throws(ExpressionError) -> FilterPredicate {
        try chain(
            of: { (parser: inout Parser) throws(ExpressionError) in try parser.negation() },
            joinedBy: Self.logical("AND", "&&", FilterPredicate.and)
        )
    }

    /// `make` where the token is `keyword` or `symbol`.
    private static func logical(
        _ keyword: String, _ symbol: String, _ make: @escaping (FilterPredicate, FilterPredicate) -> FilterPredicate
    ) -> (Token) -> ((FilterPredicate, FilterPredicate) -> FilterPredicate)? {
        { token in token.isKeyword(keyword) || token.isSymbol(symbol) ? make : nil }
    }

    private mutating func negation() throws(ExpressionError) -> FilterPredicate {
        if current.isKeyword("NOT") || current.isSymbol("!") {
            try enterLevel()
            defer { leaveLevel() }
            _ = advance()
            return .not(try negation())
        }
        return try primaryPredicate()
    }

    /// A parenthesis opens either a predicate, `(a > 1 OR b)`, or an expression,
    /// `(a + 1) > 2`: try the predicate first, then the comparison, and report whichever error
    /// got further.
    private mutating func primaryPredicate() throws(ExpressionError) -> FilterPredicate {
        if current.isKeyword("TRUEPREDICATE") || current.isKeyword("FALSEPREDICATE") {
            return .constant(advance().isKeyword("TRUEPREDICATE"))
        }
        guard current.isSymbol("(") else { return try comparison() }
        let start = position
        let groupError: ExpressionError
        do throws(ExpressionError) {
            _ = advance()
            let inner = try predicate()
            try expectSymbol(")")
            return inner
        } catch {
            groupError = error
        }
        position = start
        do throws(ExpressionError) {
            return try comparison()
        } catch {
            throw error.column >= groupError.column ? error : groupError
        }
    }

    private mutating func comparison() throws(ExpressionError) -> FilterPredicate {
        let left = try expression()
        let operatorToken = current
        guard let op = comparisonOperator() else {
            if let word = operatorToken.keyword, unsupportedWords.contains(word) {
                throw error("\(word) is not supported", at: operatorToken)
            }
            throw expected("a comparison operator")
        }
        _ = advance()
        let isCaseInsensitive = try modifier()
        let right = try expression()
        return .comparison(Comparison(left, op, right, isCaseInsensitive: isCaseInsensitive))
    }

    private func comparisonOperator() -> ComparisonOperator? {
        let symbols: [String: ComparisonOperator] = [
            "==": .equal, "=": .equal, "!=": .notEqual, "<>": .notEqual, "<": .less, "<=": .lessOrEqual,
            "=<": .lessOrEqual, ">": .greater, ">=": .greaterOrEqual, "=>": .greaterOrEqual,
        ]
        if case .symbol(let symbol) = current.kind { return symbols[symbol] }
        guard let word = current.keyword else { return nil }
        return [ComparisonOperator.beginsWith, .endsWith, .contains, .like, .in].first { $0.rawValue == word }
    }

    /// `[c]` after an operator; `[d]` (diacritics) and others are refused.
    private mutating func modifier() throws(ExpressionError) -> Bool {
        guard current.isSymbol("[") else { return false }
        _ = advance()
        let flagsToken = current
        guard case .identifier(let flags, false) = flagsToken.kind else { throw expected("c in [c]") }
        for flag in flags.lowercased() where flag != "c" {
            let message = flag == "d"
                ? "diacritic-insensitive comparison [\(flags)] is not supported"
                : "unknown comparison option '\(flag)' in [\(flags)]; only [c] is supported"
            throw error(message, at: flagsToken)
        }
        _ = advance()
        try expectSymbol("]")
        return true
    }
}
