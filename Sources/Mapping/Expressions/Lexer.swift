/// One token of an expression or predicate, with the column it starts at (1-based).
struct Token: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case integer(Int64)
        case double(Double)
        case string(String)
        /// `$name`, without the `$`.
        case variable(String)
        /// A name; `isEscaped` when written with `#` (`#size`), which makes it never a keyword.
        case identifier(String, isEscaped: Bool)
        /// A built-in function's selector: `uppercase:`, `add:to:`.
        case selector(String)
        case symbol(String)
        case end
    }

    var kind: Kind
    var column: Int
    /// As written, for messages.
    var text: String

    /// The keyword this token spells (upper-cased), if it is an unescaped name.
    var keyword: String? {
        if case .identifier(let name, false) = kind { return name.uppercased() }
        return nil
    }

    func isSymbol(_ symbol: String) -> Bool { kind == .symbol(symbol) }

    func isKeyword(_ word: String) -> Bool { keyword == word }
}

/// NSPredicate's reserved words (plus FUNCTION): a key path component spelled like one must be
/// escaped with `#`, as in `$source.#size`.
let reservedWords: Set<String> = [
    "AND", "OR", "IN", "NOT", "ALL", "ANY", "SOME", "NONE", "LIKE", "CASEINSENSITIVE", "CI", "MATCHES",
    "CONTAINS", "BEGINSWITH", "ENDSWITH", "BETWEEN", "NULL", "NIL", "SELF", "TRUE", "YES", "FALSE", "NO",
    "FIRST", "LAST", "SIZE", "ANYKEY", "SUBQUERY", "FETCH", "CAST", "TRUEPREDICATE", "FALSEPREDICATE",
    "FUNCTION", "TERNARY",
]

/// Splits text into tokens. The last token is `.end`, placed at the last non-blank character so
/// that "expected …" at the end of the text points at what is left unfinished.
struct Lexer {
    private let text: String
    private let chars: [Character]
    private var index = 0

    private static let twoCharacterSymbols: Set<String> = ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", "**"]
    private static let oneCharacterSymbols: Set<Character> = ["(", ")", "{", "}", ",", ".", "[", "]", "+", "-", "*", "/", "<", ">", "=", "!"]

    init(_ text: String) {
        self.text = text
        self.chars = Array(text)
    }

    static func tokens(of text: String) throws(ExpressionError) -> [Token] {
        var lexer = Lexer(text)
        var tokens: [Token] = []
        while let token = try lexer.next() {
            tokens.append(token)
        }
        let lastNonBlank = lexer.chars.lastIndex { !$0.isWhitespace }.map { $0 + 1 } ?? 1
        tokens.append(Token(kind: .end, column: lastNonBlank, text: ""))
        return tokens
    }

    private func error(_ message: String, at index: Int) -> ExpressionError {
        ExpressionError(text: text, column: index + 1, message: message)
    }

    private func peek(_ offset: Int = 0) -> Character? {
        index + offset < chars.count ? chars[index + offset] : nil
    }

    private static func isNameStart(_ c: Character?) -> Bool {
        guard let c else { return false }
        return c.isLetter || c == "_"
    }

    private static func isNamePart(_ c: Character?) -> Bool {
        guard let c else { return false }
        return c.isLetter || c.isNumber || c == "_"
    }

    private static func isDigit(_ c: Character?) -> Bool {
        guard let c else { return false }
        return c.isASCII && c.isNumber
    }

    private mutating func next() throws(ExpressionError) -> Token? {
        while let c = peek(), c.isWhitespace { index += 1 }
        guard let c = peek() else { return nil }
        let start = index
        if Lexer.isDigit(c) { return try number() }
        if c == "\"" || c == "'" { return try string(quote: c) }
        if c == "$" {
            index += 1
            guard Lexer.isNameStart(peek()) else { throw error("expected a variable name after '$'", at: start) }
            let name = readName()
            return Token(kind: .variable(name), column: start + 1, text: "$" + name)
        }
        if c == "#" {
            index += 1
            guard Lexer.isNameStart(peek()) else { throw error("expected a name after '#'", at: start) }
            let name = readName()
            return Token(kind: .identifier(name, isEscaped: true), column: start + 1, text: "#" + name)
        }
        if Lexer.isNameStart(c) { return nameOrSelector() }
        if let d = peek(1), Lexer.twoCharacterSymbols.contains(String([c, d])) {
            index += 2
            return Token(kind: .symbol(String([c, d])), column: start + 1, text: String([c, d]))
        }
        if Lexer.oneCharacterSymbols.contains(c) {
            index += 1
            return Token(kind: .symbol(String(c)), column: start + 1, text: String(c))
        }
        if c == "@" { throw error("collection operators (@count, @sum, …) are not supported", at: start) }
        throw error("unexpected character '\(c)'", at: start)
    }

    private mutating func readName() -> String {
        var name = ""
        while Lexer.isNamePart(peek()) {
            name.append(chars[index])
            index += 1
        }
        return name
    }

    /// A name, or a selector when colons follow: `uppercase:`, `add:to:`.
    private mutating func nameOrSelector() -> Token {
        let start = index
        let name = readName()
        guard peek() == ":" else {
            return Token(kind: .identifier(name, isEscaped: false), column: start + 1, text: name)
        }
        var selector = name + ":"
        index += 1
        while Lexer.isNameStart(peek()) {
            let save = index
            let part = readName()
            guard peek() == ":" else {
                index = save
                break
            }
            selector += part + ":"
            index += 1
        }
        return Token(kind: .selector(selector), column: start + 1, text: selector)
    }

    /// `12`, `1.5`, `2e10`, `1.5E-3`. A fraction or an exponent makes it a Double.
    private mutating func number() throws(ExpressionError) -> Token {
        let start = index
        while Lexer.isDigit(peek()) { index += 1 }
        var isFractional = false
        if peek() == ".", Lexer.isDigit(peek(1)) {
            isFractional = true
            index += 1
            while Lexer.isDigit(peek()) { index += 1 }
        }
        if peek() == "e" || peek() == "E" {
            let signed = peek(1) == "+" || peek(1) == "-"
            if Lexer.isDigit(peek(signed ? 2 : 1)) {
                isFractional = true
                index += signed ? 2 : 1
                while Lexer.isDigit(peek()) { index += 1 }
            }
        }
        let spelling = String(chars[start..<index])
        if isFractional {
            guard let value = Double(spelling), value.isFinite else { throw error("number \(spelling) is out of range", at: start) }
            return Token(kind: .double(value), column: start + 1, text: spelling)
        }
        guard let value = Int64(spelling) else { throw error("integer \(spelling) is out of range", at: start) }
        return Token(kind: .integer(value), column: start + 1, text: spelling)
    }

    /// A single- or double-quoted string with the escapes \\ \" \' \n \t \r \uXXXX.
    private mutating func string(quote: Character) throws(ExpressionError) -> Token {
        let start = index
        index += 1
        var value = ""
        while let c = peek() {
            index += 1
            if c == quote {
                return Token(kind: .string(value), column: start + 1, text: String(chars[start..<index]))
            }
            guard c == "\\" else {
                value.append(c)
                continue
            }
            guard let escaped = peek() else { break }
            switch escaped {
            case "\\", "\"", "'": value.append(escaped)
            case "n": value.append("\n")
            case "t": value.append("\t")
            case "r": value.append("\r")
            case "u":
                let hex = String(chars[(index + 1)..<min(index + 5, chars.count)])
                guard hex.count == 4, let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
                    throw error("expected 4 hex digits after '\\u'", at: index - 1)
                }
                value.unicodeScalars.append(scalar)
                index += 4
            default: throw error("unknown escape '\\\(escaped)' in string", at: index - 1)
            }
            index += 1
        }
        throw error("unterminated string", at: start)
    }
}
