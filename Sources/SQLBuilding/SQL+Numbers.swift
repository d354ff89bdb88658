import Foundation

/// A number as PostgreSQL reads it inline: an optional minus, digits with an optional fraction,
/// an optional exponent (`12`, `-3.50`, `.5`, `1e+20`). Made from a finite Double, or from text
/// that has exactly that form, so nothing else can reach SQL through it.
public struct SQLNumber: Sendable, Hashable, CustomStringConvertible {
    public let text: String

    /// Nil when `text` is not a number of that form (`NaN`, `1,5`, `1; DROP …`).
    public init?(_ text: String) {
        guard text.range(of: #"^-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"#, options: .regularExpression) != nil else {
            return nil
        }
        self.text = text
    }

    /// Swift's shortest text that reads back to `value` (`1.5`, `1e-05`), which PostgreSQL
    /// reads as the same number. Infinity and NaN have no such text.
    public init(_ value: Double) {
        precondition(value.isFinite, "\(value) has no inline SQL number; bind it instead")
        text = String(value)
    }

    /// `-` first: after an operator it must be parenthesized, for `--` starts a comment.
    public var isNegative: Bool { text.hasPrefix("-") }

    public var description: String { text }
}

extension SQL.Interpolation {
    /// An inline number, `1.5`, `-3`, `1e+20`, for expressions that must carry no binds.
    public mutating func appendInterpolation(literal number: SQLNumber) {
        appendLiteral(number.text)
    }

    /// An inline finite Double, as `SQLNumber` writes it.
    public mutating func appendInterpolation(literal value: Double) {
        appendInterpolation(literal: SQLNumber(value))
    }
}
