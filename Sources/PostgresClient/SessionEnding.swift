import Foundation

/// Why the server ended a session, from the FATAL message it sent before closing it, which
/// libpq puts in the connection's error message ahead of its own "server closed the
/// connection unexpectedly".
struct SessionEnding: Sendable {
    var sqlState: SQLState?
    var message: String

    /// The server's messages for the endings the orchestrator meets, as PostgreSQL words them
    /// in English (libpq hands on no SQLSTATE with them).
    static let knownStates: [String: SQLState] = [
        "terminating connection due to idle-in-transaction timeout": .idleInTransactionSessionTimeout,
        "terminating connection due to idle-session timeout": "57P05",
        "terminating connection due to administrator command": "57P01",
    ]

    /// Nil when the connection's message holds no FATAL line.
    init?(connectionMessage: String) {
        guard let line = connectionMessage.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("FATAL:") }) else { return nil }
        message = line.dropFirst("FATAL:".count).trimmingCharacters(in: .whitespaces)
        sqlState = Self.knownStates[message]
    }
}

extension PostgresError {
    /// A lost connection gets the reason the server gave for ending it, and for an ending that
    /// has one, what it means.
    mutating func adopt(_ ending: SessionEnding) {
        severity = "FATAL"
        sqlState = ending.sqlState
        message = ending.message
        if ending.sqlState == .idleInTransactionSessionTimeout {
            hint = "the session stayed idle inside a transaction longer than its idle_in_transaction_session_timeout (the process was stopped or paused, or too slow between two statements), so PostgreSQL ended it and released its locks; run the command again"
        }
    }
}
