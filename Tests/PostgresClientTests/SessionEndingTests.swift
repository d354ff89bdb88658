import Foundation
import PostgresClient
import Testing
import TestSupport

/// Issue 20.6: a session PostgreSQL ended for `idle_in_transaction_session_timeout` is reported
/// as that (FATAL 25P03, with what it means), not as "the server terminated abnormally".
@Suite("Session ended by the server")
struct SessionEndingTests {
    @Test("a statement after the idle timeout ended the session reports 25P03 and why", integration, arguments: ["execute", "copy"])
    func idleTimeoutIsNamed(kind: String) throws {
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try connection.execute("CREATE TABLE item (id int)")
            try connection.execute("SET idle_in_transaction_session_timeout = 300")
            try connection.execute("BEGIN")
            try connection.execute("SELECT 1")
            Thread.sleep(forTimeInterval: 1.5)
            let error = try #require(throws: PostgresError.self) {
                if kind == "copy" {
                    try connection.copyIn("COPY item (id) FROM STDIN", rows: [["1"]])
                } else {
                    try connection.execute("SELECT 2")
                }
            }
            #expect(error.sqlState == .idleInTransactionSessionTimeout, "\(error)")
            // The server's FATAL, kept by the notice receiver (EndedSessionTests), or else read
            // from the message libpq kept: either says why, naming the setting.
            #expect(error.description.hasPrefix("FATAL 25P03: "), "\(error)")
            #expect(error.description.contains("idle_in_transaction_session_timeout") || error.hint?.contains("idle_in_transaction_session_timeout") == true, "\(error)")
            #expect(!error.description.contains("terminated abnormally"), "\(error)")
        }
    }
}
