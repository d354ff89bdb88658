import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 9.6: no command waits without bound or in silence.
@Suite("Bounded waits")
struct BoundedWaitTests {
    @Test("a second apply waits --lock-wait seconds, naming the holder's pid and application, then exits 1", integration)
    func lockWaitRunsOut() throws {
        try TestDatabase.withFreshDatabase { url in
            let holder = try PostgresConnection(url: url)
            defer { holder.close() }
            try holder.execute("SET application_name = 'holder-under-test'")
            let pid = try #require(holder.execute("SELECT pg_backend_pid() AS pid").int(0, "pid"))
            try holder.execute("SELECT pg_advisory_lock(\(PostgresConnection.advisoryLockKey(for: "orchestrator:store:library")))")

            let started = Date()
            let result = try RunningOrchestrator(["apply", "--model", "Tests/Fixtures/Library", "--lock-wait", "2"], databaseURL: url)
                .finish(killingAfter: 30)
            let elapsed = Date().timeIntervalSince(started)
            #expect(result.exitCode == 1, "\(result)")
            #expect(elapsed >= 2 && elapsed < 10, "ended after \(elapsed) s")
            #expect(result.stderrLines.count == 2, "\(result)")
            #expect(result.stderrLines.first?.hasPrefix("note: waiting up to 2 s (--lock-wait) for store library, which is being migrated by pid \(pid) (application_name 'holder-under-test'") == true, "\(result)")
            #expect(result.stderrLines.last?.hasPrefix("error: store library is being migrated by pid \(pid) (application_name 'holder-under-test'") == true, "\(result)")
            #expect(result.stderr.contains("gave up after waiting"), "\(result)")
            #expect(try !schemaExists("library", on: holder))
        }
    }

    @Test("a server that accepts the connection and never answers ends the command after the default connect_timeout")
    func silentServer() throws {
        let server = try SilentServer()
        let started = Date()
        let result = try RunningOrchestrator(["status", "--model", "migrations"], databaseURL: "postgres://someone@127.0.0.1:\(server.port)/db")
            .finish(killingAfter: 40)
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.exitCode == 1, "\(result)")
        #expect(elapsed >= 9 && elapsed < 20, "ended after \(elapsed) s")
        #expect(result.stderrLines.count == 1, "\(result)")
        #expect(result.stderr.hasPrefix("error: cannot connect to postgres://someone@127.0.0.1:\(server.port)/db: "), "\(result)")
        #expect(result.stderr.contains("timeout expired"), "\(result)")
        #expect(result.stderr.contains("connect_timeout"), "\(result)")
    }
}

extension RunningOrchestrator {
    /// `finish()`, killing the process first if it still runs after `seconds` (a hang).
    func finish(killingAfter seconds: TimeInterval) throws -> CLIResult {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if isRunning { kill() }
        return try finish()
    }
}
