/// An expression or predicate that does not parse: the text, the column (1-based, in
/// characters) and what was expected there. Its description shows the text with a caret:
///
///     $source.amount +
///                    ^ expected an operand at column 16
///
/// When the text ends too early the caret points at its last character.
public struct ExpressionError: Error, Sendable, Hashable, CustomStringConvertible {
    public var text: String
    public var column: Int
    public var message: String

    public init(text: String, column: Int, message: String) {
        self.text = text
        self.column = column
        self.message = message
    }

    public var description: String {
        // Tabs and newlines would throw the caret off: shown as spaces.
        let shown = String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 })
        return shown + "\n" + String(repeating: " ", count: max(0, column - 1)) + "^ \(message) at column \(column)"
    }
}
