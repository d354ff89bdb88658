import Foundation
import JSONRendering

/// Expressions and predicates print in the syntax the parser reads, so that parsing the text
/// gives the same value back (the canonical form shown in plans and messages).
extension ValueExpression: CustomStringConvertible {
    public var description: String {
        switch self {
        case .constant(let value):
            return formatConstant(value)
        case .variable(let variable):
            return "$" + variable.rawValue
        case .keyPath(let variable, let path):
            return (["$" + variable.rawValue] + path.map(escapedName)).joined(separator: ".")
        case .negate(let operand):
            if case .arithmetic = operand { return "-(\(operand))" }
            return "-\(operand)"
        case .arithmetic(let op, let left, let right):
            let leftText = left.precedence < op.precedence ? "(\(left))" : left.description
            let rightText = right.precedence <= op.precedence ? "(\(right))" : right.description
            return "\(leftText) \(op.rawValue) \(rightText)"
        case .builtin(let function, let arguments):
            let name = function == .now ? "now" : function.rawValue
            return name + "(" + arguments.map(\.description).joined(separator: ", ") + ")"
        case .function(let target, let selector, let arguments):
            let parts = [target.description, formatString(selector)] + arguments.map(\.description)
            return "FUNCTION(" + parts.joined(separator: ", ") + ")"
        case .list(let items):
            return "{" + items.map(\.description).joined(separator: ", ") + "}"
        }
    }

    /// Arithmetic binds loosest; everything else is an atom.
    fileprivate var precedence: Int {
        if case .arithmetic(let op, _, _) = self { return op.precedence }
        return 3
    }
}

extension FilterPredicate: CustomStringConvertible {
    public var description: String {
        switch self {
        case .constant(let value):
            return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let comparison):
            return comparison.description
        case .and(let left, let right):
            return "\(left.operand(of: self, isRight: false)) AND \(right.operand(of: self, isRight: true))"
        case .or(let left, let right):
            return "\(left.operand(of: self, isRight: false)) OR \(right.operand(of: self, isRight: true))"
        case .not(let operand):
            return "NOT (\(operand))"
        }
    }

    /// Parenthesized when it would otherwise bind differently: OR inside AND, and a compound
    /// of the same kind on the right.
    private func operand(of parent: FilterPredicate, isRight: Bool) -> String {
        switch (parent, self) {
        case (.and, .or):
            return "(\(self))"
        case (.and, .and), (.or, .or):
            return isRight ? "(\(self))" : description
        default:
            return description
        }
    }
}

extension Comparison: CustomStringConvertible {
    public var description: String {
        "\(left) \(op.rawValue)\(isCaseInsensitive ? "[c]" : "") \(right)"
    }
}

private func escapedName(_ name: String) -> String {
    reservedWords.contains(name.uppercased()) ? "#" + name : name
}

private func formatConstant(_ value: Value) -> String {
    switch value {
    case .null: return "nil"
    case .int(let i): return String(i)
    case .double(let d): return String(d)
    case .decimal(let text): return text
    case .string(let s): return formatString(s)
    case .bool(let b): return b ? "YES" : "NO"
    case .date(let date): return "CAST(\(date.timeIntervalSinceReferenceDate), \"NSDate\")"
    case .bytes(let bytes): return formatString(bytes.map { String(format: "%02x", $0) }.joined())
    case .uuid(let uuid): return formatString(uuid.uuidString)
    }
}

/// A double-quoted string literal as the expression lexer reads it back: JSON's escapes.
func formatString(_ s: String) -> String {
    JSONValue.quote(s)
}
