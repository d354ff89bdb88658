/// The value expression rules: arithmetic, operands, names and key paths.
extension Parser {
    /// additive := multiplicative (('+' | '-') multiplicative)*
    mutating func expression() throws(ExpressionError) -> ValueExpression {
        try enterLevel()
        defer { leaveLevel() }
        return try chain(
            of: { (parser: inout Parser) throws(ExpressionError) in try parser.multiplicative() },
            joinedBy: Self.arithmetic(among: [.add, .subtract])
        )
    }

    /// multiplicative := unary (('*' | '/') unary)*
    mutating func multiplicative() throws(ExpressionError) -> ValueExpression {
        let result = try chain(
            of: { (parser: inout Parser) throws(ExpressionError) in try parser.unary() },
            joinedBy: Self.arithmetic(among: [.multiply, .divide])
        )
        if current.isSymbol("**") { throw error("'**' (raise:toPower:) is not supported", at: current) }
        return result
    }

    /// The arithmetic node an operator among `candidates` makes.
    static func arithmetic(among candidates: [ArithmeticOperator]) -> (Token) -> ((ValueExpression, ValueExpression) -> ValueExpression)? {
        { token in candidates.first { token.isSymbol($0.rawValue) }.map { op in { .arithmetic(op, $0, $1) } } }
    }

    /// unary := '-' unary | primary
    mutating func unary() throws(ExpressionError) -> ValueExpression {
        if current.isSymbol("-") {
            try enterLevel()
            defer { leaveLevel() }
            _ = advance()
            return .negate(try unary())
        }
        return try primary()
    }

    mutating func primary() throws(ExpressionError) -> ValueExpression {
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

    mutating func identifier(_ name: String, isEscaped: Bool, token: Token) throws(ExpressionError) -> ValueExpression {
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

    func unknownVariable(_ name: String, at token: Token) -> ExpressionError {
        let all = Variable.allCases.map { "$" + $0.rawValue }
        if let close = Variable.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) {
            return error("unknown variable $\(name) (did you mean $\(close.rawValue)?)", at: token)
        }
        return error("unknown variable $\(name); the variables are \(all.joined(separator: ", "))", at: token)
    }

    /// ('.' name)*, where a reserved word needs its `#` escape.
    mutating func keyPathTail() throws(ExpressionError) -> [String] {
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
}
