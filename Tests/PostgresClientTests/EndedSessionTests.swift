import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// A session the server ends on its own while the client sits in a transaction is reported as
/// that, with the server's SQLSTATE, not as a server that "terminated abnormally".
@Suite("sessions the server ends")
struct EndedSessionTests {
    /// Opens a transaction on a new session of `url`, lets `end` end it (given a second session
    /// and the first's pid), waits until the server has no such backend (at most 60 s), then
    /// returns the error of the next statement.
    static func errorAfterTheServerEnds(url: String, setUp: String? = nil, _ end: (PostgresConnection, String) throws -> Void) throws -> PostgresError? {
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        let observer = try PostgresConnection(url: url)
        defer { observer.close() }
        if let setUp { try connection.execute(SQL(unsafeRaw: setUp)) }
        let pid = try #require(try connection.execute("SELECT pg_backend_pid()::text AS pid").value(0, "pid"))
        try connection.execute("BEGIN")
        try connection.execute("SELECT 1")
        try end(observer, pid)
        let deadline = Date().addingTimeInterval(60)
        while try observer.execute("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = \(pid)::int").int(0, "n") != 0 {
            try #require(Date() < deadline, "backend \(pid) still there after 60 s")
            Thread.sleep(forTimeInterval: 0.05)
        }
        return #expect(throws: PostgresError.self) { try connection.execute("SELECT 2") }
    }

    @Test("a transaction left idle past idle_in_transaction_session_timeout reports 25P03 and says so", integration)
    func idleInTransactionTimeout() throws {
        try TestDatabase.withFreshDatabase { url in
            let error = try Self.errorAfterTheServerEnds(url: url, setUp: "SET idle_in_transaction_session_timeout = 200") { _, _ in }
            #expect(error?.sqlState == SQLState.idleInTransactionSessionTimeout, "\(String(describing: error))")
            #expect(error?.description == "FATAL 25P03: the server ended the session: it stayed idle in a transaction longer than idle_in_transaction_session_timeout, so its transaction was rolled back (statement: SELECT 2)", "\(String(describing: error))")
        }
    }

    @Test("a session an administrator terminated reports 57P01 with the server's words", integration)
    func terminatedByAnAdministrator() throws {
        try TestDatabase.withFreshDatabase { url in
            let error = try Self.errorAfterTheServerEnds(url: url) { observer, pid in
                try observer.execute("SELECT pg_terminate_backend(\(pid)::int)")
            }
            #expect(error?.sqlState?.code == "57P01", "\(String(describing: error))")
            #expect(error?.description == "FATAL 57P01: the server ended the session (terminating connection due to administrator command); its open transaction, if any, was rolled back (statement: SELECT 2)", "\(String(describing: error))")
        }
    }
}
