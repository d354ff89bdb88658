import Foundation

/// A value bound to a `$n` placeholder. Sent to PostgreSQL in text format.
public enum SQLValue: Sendable, Hashable {
    case null
    case text(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case bytes([UInt8])

    /// The text form PostgreSQL parses for this value, nil for SQL NULL.
    public var textRepresentation: String? {
        switch self {
        case .null: return nil
        case .text(let s): return s
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return b ? "true" : "false"
        case .bytes(let b): return "\\x" + b.map { hexByte($0) }.joined()
        }
    }
}

private func hexByte(_ b: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(b >> 4)], digits[Int(b & 0xF)]])
}

/// A statement as a value: text with `$n` placeholders and the values bound to them.
///
/// Built by interpolation: values become binds, identifiers are quoted by `quoteIdentifier`, and
/// raw text needs the visible `unsafeRaw:` label.
///
///     let sql: SQL = "SELECT * FROM \(ident: schema).\(ident: table) WHERE _pk = \(42)"
public struct SQL: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringInterpolation {
    public private(set) var text: String
    public private(set) var binds: [SQLValue]

    public init(unsafeRaw text: String) {
        self.text = text
        self.binds = []
    }

    public init(stringLiteral value: String) {
        self.init(unsafeRaw: value)
    }

    public init(stringInterpolation: Interpolation) {
        self.text = stringInterpolation.text
        self.binds = stringInterpolation.binds
    }

    public var description: String { text }

    /// Appends another statement fragment, renumbering its placeholders.
    public mutating func append(_ other: SQL) {
        var interpolation = Interpolation(literalCapacity: 0, interpolationCount: 0)
        interpolation.text = text
        interpolation.binds = binds
        interpolation.appendInterpolation(other)
        text = interpolation.text
        binds = interpolation.binds
    }

    /// Joins fragments with a separator.
    public static func joined(_ parts: [SQL], separator: String) -> SQL {
        var result = SQL(unsafeRaw: "")
        for (index, part) in parts.enumerated() {
            if index > 0 { result.append(SQL(unsafeRaw: separator)) }
            result.append(part)
        }
        return result
    }

    /// A body between dollar quotes, `$check$…$check$` (the code of a `DO` block): `$check1$`,
    /// `$check2$`, … when the body itself contains the tag. The body carries no binds: nothing
    /// inside dollar quotes is a placeholder.
    public static func dollarQuoted(_ body: SQL, tag: String) -> SQL {
        precondition(body.binds.isEmpty, "a dollar-quoted body cannot carry bound values")
        var quote = "$\(tag)$"
        var n = 0
        while body.text.contains(quote) {
            n += 1
            quote = "$\(tag)\(n)$"
        }
        return "\(unsafeRaw: quote)\(body)\(unsafeRaw: quote)"
    }

    public struct Interpolation: StringInterpolationProtocol {
        var text = ""
        var binds: [SQLValue] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity)
        }

        public mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        /// A quoted identifier: `"name"`.
        public mutating func appendInterpolation(ident name: String) {
            text += quoteIdentifier(name)
        }

        /// A qualified name: `"schema"."name"`.
        public mutating func appendInterpolation(ident schema: String, _ name: String) {
            text += quoteIdentifier(schema) + "." + quoteIdentifier(name)
        }

        /// A comma-separated list of quoted identifiers.
        public mutating func appendInterpolation(idents names: [String]) {
            text += names.map(quoteIdentifier).joined(separator: ", ")
        }

        /// An inline string literal, for DDL where binds are not allowed (defaults, comments).
        public mutating func appendInterpolation(literal value: String) {
            text += quoteLiteral(value)
        }

        /// An inline integer literal, `-32768`, for DDL and predicates that must carry no binds.
        public mutating func appendInterpolation<Integer: BinaryInteger>(literal value: Integer) {
            text += String(value)
        }

        /// A qualified name as a string literal, `'"schema"."name"'`: the text form of a `regclass`
        /// (`pg_get_serial_sequence`, `to_regclass`).
        public mutating func appendInterpolation(nameLiteral schema: String, _ name: String) {
            text += quoteLiteral(quoteIdentifier(schema) + "." + quoteIdentifier(name))
        }

        /// A comma-separated list of inline string literals, `'A', 'B'`: the entity names of
        /// `"_entity" IN (…)` in DDL and predicates, where binds are not allowed or not wanted.
        public mutating func appendInterpolation(literals values: [String]) {
            text += values.map(quoteLiteral).joined(separator: ", ")
        }

        /// Text spliced in as is. The label is the warning.
        public mutating func appendInterpolation(unsafeRaw raw: String) {
            text += raw
        }

        public mutating func appendInterpolation(_ value: SQLValue) {
            binds.append(value)
            text += "$\(binds.count)"
        }

        public mutating func appendInterpolation(_ value: String) {
            appendInterpolation(SQLValue.text(value))
        }

        public mutating func appendInterpolation(_ value: String?) {
            appendInterpolation(value.map(SQLValue.text) ?? .null)
        }

        public mutating func appendInterpolation(_ value: Int) {
            appendInterpolation(SQLValue.int(Int64(value)))
        }

        public mutating func appendInterpolation(_ value: Int64) {
            appendInterpolation(SQLValue.int(value))
        }

        public mutating func appendInterpolation(_ value: Bool) {
            appendInterpolation(SQLValue.bool(value))
        }

        /// A nested fragment; its placeholders are renumbered after ours.
        public mutating func appendInterpolation(_ fragment: SQL) {
            let offset = binds.count
            text += offset == 0 ? fragment.text : renumberPlaceholders(fragment.text, by: offset)
            binds += fragment.binds
        }
    }
}

/// Shifts `$n` placeholders outside of quotes by `offset`.
private func renumberPlaceholders(_ text: String, by offset: Int) -> String {
    replacingPlaceholders(in: text) { "$\($0 + offset)" }
}

/// `text` with each `$n` placeholder outside of quotes replaced by `replacement(n)`.
func replacingPlaceholders(in text: String, with replacement: (Int) -> String) -> String {
    var result = ""
    var chars = Array(text)[...]
    var quote: Character? = nil
    while let c = chars.popFirst() {
        if let q = quote {
            result.append(c)
            if c == q { quote = nil }
            continue
        }
        if c == "'" || c == "\"" {
            quote = c
            result.append(c)
        } else if c == "$", let first = chars.first, first.isASCII, first.isNumber {
            var digits = ""
            while let d = chars.first, d.isASCII, d.isNumber {
                digits.append(d)
                chars.removeFirst()
            }
            result += replacement(Int(digits)!)
        } else {
            result.append(c)
        }
    }
    return result
}

/// Quotes an identifier for PostgreSQL: wraps it in double quotes, doubling any inside.
public func quoteIdentifier(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// Quotes a string literal for PostgreSQL (standard_conforming_strings): single quotes doubled.
public func quoteLiteral(_ value: String) -> String {
    "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
}
