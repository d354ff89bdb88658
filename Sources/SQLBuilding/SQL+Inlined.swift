/// A statement with its bound values written into the text as literals, for a script that
/// runs without binds (`plan --format sql`). Values are quoted by `quoteLiteral`; the result is
/// what the server would have run with the binds.
extension SQL {
    public var inlined: String {
        guard !binds.isEmpty else { return text }
        return replacingPlaceholders(in: text) { number in
            precondition(binds.indices.contains(number - 1), "placeholder $\(number) without a bound value in \(text)")
            return Self.literal(binds[number - 1])
        }
    }

    /// A value as a literal PostgreSQL reads back to the same value.
    static func literal(_ value: SQLValue) -> String {
        switch value {
        case .null: "NULL"
        case .int(let number): String(number)
        case .bool(let flag): flag ? "true" : "false"
        case .text(let text): quoteLiteral(text)
        case .double(let number): quoteLiteral(String(number)) + "::double precision"
        case .bytes: quoteLiteral(value.textRepresentation!) + "::bytea"
        }
    }
}
