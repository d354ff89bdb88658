/// The rows and status of one statement, with every value in PostgreSQL's text format.
public struct QueryResult: Sendable {
    public var columns: [String]
    /// Text values, nil for SQL NULL.
    public var rows: [[String?]]
    /// Rows inserted, updated, deleted, copied or selected (libpq's `PQcmdTuples`); 0 otherwise.
    public var affectedRows: Int
    /// The command status tag, e.g. `INSERT 0 3` or `CREATE TABLE`.
    public var commandTag: String

    public init(columns: [String] = [], rows: [[String?]] = [], affectedRows: Int = 0, commandTag: String = "") {
        self.columns = columns
        self.rows = rows
        self.affectedRows = affectedRows
        self.commandTag = commandTag
    }

    public var isEmpty: Bool { rows.isEmpty }

    /// The text value at `row` in the column named `column`: `result[row: 0, column: "id"]`.
    /// Unknown column names are a programming error and stop at a precondition.
    public subscript(row row: Int, column column: String) -> String? {
        rows[row][columnIndex(column)]
    }

    public func value(_ row: Int, _ column: String) -> String? {
        self[row: row, column: column]
    }

    /// The value parsed as a 64-bit integer; nil for NULL or non-integer text.
    public func int(_ row: Int, _ column: String) -> Int64? {
        self[row: row, column: column].flatMap { Int64($0) }
    }

    /// The value of a `boolean` column (`t` / `f` in text format); nil for NULL or other text.
    public func bool(_ row: Int, _ column: String) -> Bool? {
        switch self[row: row, column: column] {
        case "t": return true
        case "f": return false
        default: return nil
        }
    }

    /// The value of a `bytea` column (hex format, `\x0a0b`); nil for NULL or other text.
    public func bytes(_ row: Int, _ column: String) -> [UInt8]? {
        self[row: row, column: column].flatMap(Self.bytes(fromHex:))
    }

    /// The bytes of `bytea` text in hex format (`\x0a0b`); nil for other text.
    public static func bytes(fromHex text: String) -> [UInt8]? {
        guard text.hasPrefix("\\x") else { return nil }
        let digits = Array(text.utf8.dropFirst(2))
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for pairStart in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hexValue(digits[pairStart]), let low = hexValue(digits[pairStart + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private func columnIndex(_ name: String) -> Int {
        guard let index = columns.firstIndex(of: name) else {
            preconditionFailure("no column \"\(name)\" in result; columns are \(columns)")
        }
        return index
    }
}

private func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
    default: return nil
    }
}
