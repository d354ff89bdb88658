import Foundation
import PostgresClient
import Testing
import TestSupport

@Suite("Concurrent apply")
struct ConcurrentApplyTests {
    @Test("six apply processes started at once on an empty database make exactly one store", integration)
    func sixProcessesMakeOneStore() throws {
        try TestDatabase.withFreshDatabase { url in
            let processes = try (1...6).map { _ in
                try RunningOrchestrator(["apply", "--model", "Tests/Fixtures/Library"], databaseURL: url)
            }
            let results = try processes.map { try $0.finish() }
            for result in results {
                #expect(result.exitCode == 0, "\(result)")
                // A waiter may say who it waits for; nothing else goes to stderr.
                #expect(result.stderrLines.allSatisfy {
                    $0.hasPrefix("note: waiting up to 60 s (--lock-wait) for store library") || $0.hasPrefix("note: waiting for a lock: an advisory lock is locked by pid ")
                }, "\(result)")
            }
            let creators = results.filter { $0.stdoutLines.last?.hasPrefix("store library: now at 'Library 1'") == true }
            let waiters = results.filter { $0.stdoutLines == ["store library: already up to date at 'Library 1'; nothing to do"] }
            #expect(creators.count == 1, "\(results)")
            #expect(waiters.count == 5, "\(results)")

            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            #expect(try schemaExists("library", on: connection))
            let stores = try connection.execute("SELECT store, version_name FROM orchestrator.stores")
            #expect(stores.rows == [["library", "Library 1"]])
            let history = try connection.execute("SELECT kind, outcome FROM orchestrator.migrations ORDER BY id")
            #expect(history.rows == [["create", "succeeded"]])
        }
    }
}
