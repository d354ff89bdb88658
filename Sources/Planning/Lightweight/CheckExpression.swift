import SQLBuilding

/// Reads the CHECK expressions `StoreLayout` writes, which are made of quoted identifiers,
/// quoted literals and keywords only, to compare a source check with a destination one.
enum CheckExpression {
    enum Token: Equatable {
        case identifier(String)
        case literal(String)
        case text(String)
    }

    static func tokens(_ expression: String) -> [Token] {
        var tokens: [Token] = []
        var chars = Array(expression)[...]
        var text = ""
        while let c = chars.popFirst() {
            guard c == "\"" || c == "'" else {
                text.append(c)
                continue
            }
            if !text.isEmpty { tokens.append(.text(text)) }
            text = ""
            var value = ""
            while let next = chars.popFirst() {
                if next == c {
                    if chars.first == c {
                        value.append(c)
                        chars.removeFirst()
                        continue
                    }
                    break
                }
                value.append(next)
            }
            tokens.append(c == "\"" ? .identifier(value) : .literal(value))
        }
        if !text.isEmpty { tokens.append(.text(text)) }
        return tokens
    }

    /// The expression with each column renamed by `columns` (source -> destination); nil when it
    /// names a column that has no destination. Entity names (literals) are kept as they are, so a
    /// check naming a renamed entity never matches and is recreated after `_entity` is updated.
    static func renamingColumns(_ expression: String, _ columns: [String: String]) -> String? {
        var result = ""
        for token in tokens(expression) {
            switch token {
            case .identifier(let name):
                guard let renamed = columns[name] else { return nil }
                result += quoteIdentifier(renamed)
            case .literal(let value):
                result += quoteLiteral(value)
            case .text(let text):
                result += text
            }
        }
        return result
    }

    /// The literals of an expression: the entity names of a scoped check.
    static func literals(_ expression: String) -> [String] {
        tokens(expression).compactMap { if case .literal(let value) = $0 { value } else { nil } }
    }
}

/// Renames ordered so that no name is taken when it is given: `b -> c` before `a -> b`.
enum RenameOrder {
    /// Nil when the renames go round in a cycle (`a -> b`, `b -> a`).
    static func sorted<T>(_ renames: [T], from: (T) -> String, to: (T) -> String) -> [T]? {
        var pending = renames
        var ordered: [T] = []
        while !pending.isEmpty {
            guard let next = pending.firstIndex(where: { rename in !pending.contains { from($0) == to(rename) } }) else {
                return nil
            }
            ordered.append(pending.remove(at: next))
        }
        return ordered
    }
}
