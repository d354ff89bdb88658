/// An NSExpression read from an NSKeyedArchiver archive, reduced to the forms NSExpression
/// syntax can write. `text` writes it; `ArchivedExpressionDecoder` reads it.
indirect enum ArchivedExpression: Equatable {
    enum Constant: Equatable {
        case string(String)
        case integer(Int64)
        case real(Double)
        case bool(Bool)
        case null
        /// Seconds since 2001-01-01 00:00:00 UTC.
        case date(Double)
    }

    case constant(Constant)
    /// `$source`, `$manager`, …
    case variable(String)
    /// `SELF`
    case evaluatedObject
    /// `base.path`; the base is usually a variable (`$source.amount`) or SELF (`amount`).
    case keyPath(base: ArchivedExpression, path: String)
    /// `FUNCTION(target, "selector", arguments…)`
    case function(target: ArchivedExpression, selector: String, arguments: [ArchivedExpression])
    /// A predicate function (`uppercase:`, `now`, `add:to:`, …).
    case builtin(name: String, arguments: [ArchivedExpression])
    /// `{a, b}`
    case aggregate([ArchivedExpression])
}

extension ArchivedExpression {
    /// The expression in NSExpression syntax; throws when a part cannot be written in it.
    func text() throws -> String {
        switch self {
        case .constant(let constant):
            return try Self.text(of: constant)
        case .variable(let name):
            return "$" + (try Self.escapedName(name))
        case .evaluatedObject:
            return "SELF"
        case .keyPath(let base, let path):
            let components = try path.split(separator: ".", omittingEmptySubsequences: false).map { try Self.escapedName(String($0)) }
            let escapedPath = components.joined(separator: ".")
            switch base {
            case .evaluatedObject: return escapedPath
            case .variable, .keyPath: return try base.text() + "." + escapedPath
            default: return "FUNCTION(\(try base.text()), \"valueForKeyPath:\", \(formatString(path)))"
            }
        case .function(let target, let selector, let arguments):
            let parts = [try target.text(), formatString(selector)] + (try arguments.map { try $0.text() })
            return "FUNCTION(" + parts.joined(separator: ", ") + ")"
        case .builtin(let name, let arguments):
            if let infix = Self.infixOperators[name], arguments.count == 2 {
                // Left-associative: a right operand of the same precedence keeps its parentheses.
                let left = try arguments[0].text()
                let right = try arguments[1].text()
                let leftText = arguments[0].precedence < infix.precedence ? "(\(left))" : left
                let rightText = arguments[1].precedence <= infix.precedence ? "(\(right))" : right
                return "\(leftText) \(infix.symbol) \(rightText)"
            }
            return name + "(" + (try arguments.map { try $0.text() }).joined(separator: ", ") + ")"
        case .aggregate(let elements):
            return "{" + (try elements.map { try $0.text() }).joined(separator: ", ") + "}"
        }
    }

    /// Arithmetic written infix in NSExpression syntax, with its precedence.
    static let infixOperators: [String: (symbol: String, precedence: Int)] = [
        "add:to:": ("+", 1),
        "from:subtract:": ("-", 1),
        "multiply:by:": ("*", 2),
        "divide:by:": ("/", 2),
        "raise:toPower:": ("**", 3),
    ]

    var precedence: Int {
        if case .builtin(let name, let arguments) = self, arguments.count == 2, let infix = Self.infixOperators[name] {
            return infix.precedence
        }
        return Int.max
    }

    static func text(of constant: Constant) throws -> String {
        switch constant {
        case .string(let text): return formatString(text)
        case .integer(let value): return String(value)
        case .real(let value):
            guard value.isFinite else { throw ArchiveDecodingError(reason: "the constant \(value) has no NSExpression spelling") }
            return String(value)
        case .bool(let value): return value ? "YES" : "NO"
        case .null: return "nil"
        case .date(let seconds):
            guard seconds.isFinite else { throw ArchiveDecodingError(reason: "a date constant that is not finite") }
            return "CAST(\(seconds), \"NSDate\")"
        }
    }


    /// Words the predicate parser reserves; as names they are written with a `#` before them.
    static let reservedWords: Set<String> = [
        "AND", "OR", "IN", "NOT", "ALL", "ANY", "SOME", "NONE", "LIKE", "CASEINSENSITIVE", "CI",
        "MATCHES", "CONTAINS", "BEGINSWITH", "ENDSWITH", "BETWEEN", "NULL", "NIL", "SELF", "TRUE",
        "YES", "FALSE", "NO", "FIRST", "LAST", "SIZE", "ANYKEY", "SUBQUERY", "FETCH", "CAST",
        "TRUEPREDICATE", "FALSEPREDICATE", "FUNCTION", "TERNARY",
    ]

    /// A key or variable name, `#`-escaped when reserved; a collection operator (`@count`) as is.
    static func escapedName(_ name: String) throws -> String {
        let body = name.hasPrefix("@") ? name.dropFirst() : Substring(name)
        guard let first = body.unicodeScalars.first, first == "_" || first.properties.isAlphabetic,
              body.unicodeScalars.allSatisfy({ $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) })
        else {
            throw ArchiveDecodingError(reason: "the key '\(name)' cannot be written in NSExpression syntax")
        }
        if name.hasPrefix("@") { return name }
        return reservedWords.contains(name.uppercased()) ? "#" + name : name
    }
}
