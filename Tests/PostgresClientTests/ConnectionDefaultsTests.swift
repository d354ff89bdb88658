import Foundation
@testable import PostgresClient
import Testing
import TestSupport

/// A connection gets a connect_timeout and an application_name unless the string or libpq's
/// environment gives them (issue 9.6).
@Suite("Connection defaults")
struct ConnectionDefaultsTests {
    @Test("connect_timeout is added unless the string or PGCONNECT_TIMEOUT sets it; the application name is a fallback")
    func optionsAdded() {
        let defaults = ConnectionDefaults(usesKeepalives: false)
        let none = defaults.options(unlessSetIn: [], environment: [:])
        #expect(none.map(\.keyword) == ["connect_timeout", "fallback_application_name"])
        #expect(none.map(\.value) == ["10", "orchestrator"])
        let given = defaults.options(unlessSetIn: [("connect_timeout", "3")], environment: [:])
        #expect(given.map(\.keyword) == ["fallback_application_name"])
        let fromEnvironment = defaults.options(unlessSetIn: [], environment: ["PGCONNECT_TIMEOUT": "4"])
        #expect(fromEnvironment.map(\.keyword) == ["fallback_application_name"])
        #expect(ConnectionDefaults(connectTimeoutSeconds: nil, applicationName: nil, usesKeepalives: false).options(unlessSetIn: [], environment: [:]).isEmpty)
    }

    /// Issue 22: a server gone without a word (its machine or network) ends a wait in about a
    /// minute; the string's own settings win.
    @Test("keepalives and tcp_user_timeout are added unless the string sets them")
    func keepalivesAdded() {
        let options = ConnectionDefaults().options(unlessSetIn: [("keepalives_idle", "5")], environment: [:])
        #expect(options.map(\.keyword) == [
            "connect_timeout", "fallback_application_name", "keepalives", "keepalives_interval", "keepalives_count", "tcp_user_timeout",
        ])
        #expect(options.last?.value == "60000")
        #expect(ConnectionDefaults().livenessSettings(environment: [:])?.interval == 10)
        #expect(ConnectionDefaults().livenessSettings(environment: ["ORCHESTRATOR_LIVENESS_SECONDS": "3"])?.interval == 3)
        #expect(ConnectionDefaults().livenessSettings(environment: ["ORCHESTRATOR_LIVENESS_SECONDS": "0"]) == nil)
    }

    @Test("a server that accepts the connection and never answers fails in about connect_timeout")
    func silentServerTimesOut() throws {
        let server = try SilentServer()
        let started = Date()
        #expect {
            try PostgresConnection(url: "postgres://u@127.0.0.1:\(server.port)/db", defaults: ConnectionDefaults(connectTimeoutSeconds: 2))
        } throws: { error in
            (error as? PostgresError)?.message.contains("timeout expired") == true
        }
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 1.5 && elapsed < 6, "failed after \(elapsed) s")
    }

    @Test("a connect_timeout in the string wins over the default")
    func timeoutInStringWins() throws {
        let server = try SilentServer()
        let started = Date()
        #expect(throws: PostgresError.self) {
            try PostgresConnection(url: "host=127.0.0.1 port=\(server.port) connect_timeout=2", defaults: ConnectionDefaults(connectTimeoutSeconds: 60))
        }
        #expect(Date().timeIntervalSince(started) < 6)
    }

    @Test("sessions show as orchestrator in pg_stat_activity unless the string names another application", integration)
    func applicationName() throws {
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            #expect(try connection.execute("SHOW application_name")[row: 0, column: "application_name"] == "orchestrator")
            let separator = url.contains("://") ? (url.contains("?") ? "&" : "?") : " "
            let named = try PostgresConnection(url: url + separator + "application_name=reporting")
            defer { named.close() }
            #expect(try named.execute("SHOW application_name")[row: 0, column: "application_name"] == "reporting")
        }
    }
}
