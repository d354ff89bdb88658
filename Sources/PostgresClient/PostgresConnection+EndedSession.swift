import CLibPQ

/// What the server said when it ended the session on its own: a FATAL it sent while the
/// client was not waiting for a result (`idle_in_transaction_session_timeout`, an
/// administrator's `pg_terminate_backend`). libpq hands such a message to the notice receiver,
/// and then reports only "server closed the connection unexpectedly … terminated abnormally"
/// for the next statement; this keeps the message so that the error says what happened.
final class EndedSession: @unchecked Sendable {
    private(set) var sqlState: SQLState?
    private(set) var message: String?

    /// Receives the connection's notices in place of libpq's default (which prints them to
    /// stderr: "relation already exists, skipping"), keeping a FATAL or PANIC.
    func install(on connection: OpaquePointer) {
        PQsetNoticeReceiver(connection, { context, result in
            guard let context, let result else { return }
            let severity = PQresultErrorField(result, Int32(UnicodeScalar("V").value)).map { String(cString: $0) }
            guard severity == "FATAL" || severity == "PANIC" else { return }
            let session = Unmanaged<EndedSession>.fromOpaque(context).takeUnretainedValue()
            session.sqlState = PQresultErrorField(result, Int32(UnicodeScalar("C").value)).map { SQLState(String(cString: $0)) }
            session.message = PQresultErrorField(result, Int32(UnicodeScalar("M").value)).map { String(cString: $0) }
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Reads what the server sent while the session sat in a transaction between statements,
    /// without waiting: a FATAL sent then reaches `install`'s receiver before the next statement
    /// meets the closed connection (after which the message can no longer be read).
    func readPending(on connection: OpaquePointer) {
        let status = PQtransactionStatus(connection)
        guard status == PQTRANS_INTRANS || status == PQTRANS_INERROR else { return }
        _ = PQconsumeInput(connection)
    }

    /// The error for a statement that failed because the server had ended the session; nil
    /// when the connection is not lost or the server said nothing.
    func error(on connection: OpaquePointer, kind: PostgresError.Kind, statement: String) -> PostgresError? {
        guard PQstatus(connection) == CONNECTION_BAD, let message else { return nil }
        let text = sqlState == .idleInTransactionSessionTimeout
            ? "the server ended the session: it stayed idle in a transaction longer than idle_in_transaction_session_timeout, so its transaction was rolled back"
            : "the server ended the session (\(singleLine(message))); its open transaction, if any, was rolled back"
        return PostgresError(kind: kind, message: text, severity: "FATAL", sqlState: sqlState, statement: statement)
    }
}
