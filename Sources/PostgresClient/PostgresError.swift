import Foundation

/// A failure reported by PostgreSQL or libpq.
///
/// Carries the server's diagnostic fields so callers can branch on `sqlState` and show `detail`
/// and `hint`. `description` is one line and leaks no data: it never contains bind values (they
/// are not stored), the `detail` field (which may quote row values) or connection passwords.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// Which phase failed.
    public enum Kind: String, Sendable {
        /// Opening the connection (unreachable server, authentication, bad connection string).
        case connection
        /// A statement sent with `execute`.
        case query
        /// A `COPY ... FROM STDIN` sent with `copyIn`.
        case copy
        /// The client and server disagree about the protocol state (e.g. COPY sent to `execute`).
        case `protocol`
    }

    public var kind: Kind
    /// Severity as PostgreSQL names it in English (`ERROR`, `FATAL`), when the server sent one.
    public var severity: String?
    /// The five-character SQLSTATE code: compare with `SQLState`'s named codes.
    public var sqlState: SQLState?
    public var message: String
    public var detail: String?
    public var hint: String?
    /// 1-based character offset into `statement` where the server located the error.
    public var position: Int?
    public var schema: String?
    public var table: String?
    public var column: String?
    public var constraint: String?
    /// The SQL text that failed, with `$n` placeholders; bind values are never kept.
    public var statement: String?
    /// For a lock timeout (55P03) of a session with a `LockWaitBound`: the lock the statement
    /// waited for and who held it, when it was seen.
    public var lockWait: LockWait?

    public init(
        kind: Kind,
        message: String,
        severity: String? = nil,
        sqlState: SQLState? = nil,
        detail: String? = nil,
        hint: String? = nil,
        position: Int? = nil,
        schema: String? = nil,
        table: String? = nil,
        column: String? = nil,
        constraint: String? = nil,
        statement: String? = nil
    ) {
        self.kind = kind
        self.message = message
        self.severity = severity
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
        self.position = position
        self.schema = schema
        self.table = table
        self.column = column
        self.constraint = constraint
        self.statement = statement
    }

    /// `ERROR 42P01: relation "x" does not exist (statement: SELECT ...)`.
    public var description: String {
        var text = severity ?? defaultLabel
        if let sqlState { text += " \(sqlState)" }
        text += ": " + singleLine(message)
        if let lockWait { text += ": " + singleLine(lockWait.description) }
        if let statement {
            text += " (statement: \(truncated(collapsingWhitespace(statement), to: Self.statementDescriptionLimit)))"
        }
        return text
    }

    /// How many characters of the statement `description` shows.
    static let statementDescriptionLimit = 200

    private var defaultLabel: String {
        switch kind {
        case .connection: return "connection error"
        case .query, .copy: return "ERROR"
        case .protocol: return "protocol error"
        }
    }
}

extension PostgresError {
    /// The server's DETAIL and HINT, each on one line ("detail: …", "hint: …"): what to show a
    /// person beside `description`. DETAIL may quote row values (a duplicate key), so it goes
    /// to the operator's terminal, never into the store's history.
    public var diagnostics: [String] {
        [detail.map { "detail: " + singleLine($0) }, hint.map { "hint: " + singleLine($0) }].compactMap { $0 }
    }
}

/// Joins the non-empty lines of a libpq or server message with "; ".
func singleLine(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline)
        .map { $0.trimmingCharacters(in: .whitespaces) }
        .filter { !$0.isEmpty }
        .joined(separator: "; ")
}

/// Runs of whitespace (newlines included) as one space, so a statement fits on one line.
private func collapsingWhitespace(_ text: String) -> String {
    text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
}

private func truncated(_ text: String, to limit: Int) -> String {
    text.count <= limit ? text : String(text.prefix(limit)) + "…"
}
