import Foundation

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
