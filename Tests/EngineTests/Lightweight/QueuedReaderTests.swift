import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// Issue 9.6: what production traffic waits for behind orchestrator.
@Suite(integration) struct QueuedReaderTests {
    /// While a long read holds the table, `apply` (default options) queues its ALTER again and
    /// again; readers arriving meanwhile queue behind each request. Each waits at most about the
    /// default lock_timeout (0.5 s), never the whole time the long read lasts.
    @Test func readersBehindAQueuedAlterWaitAboutTheLockTimeoutAtMost() throws {
        let model = try LockTimeoutTests.model()
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try SampleDataTests.createAndFill(model, version: "Shop 1", store: "shop", rows: 100, on: connection)
            let longRead = try PostgresConnection(url: url)
            defer { longRead.close() }
            try longRead.execute("BEGIN; SELECT count(*) FROM shop.item")
            let reader = try PostgresConnection(url: url)
            defer { reader.close() }

            let applied = DispatchSemaphore(value: 0)
            nonisolated(unsafe) let migrator = StoreMigrator(connection: connection, model: model, store: "shop")
            nonisolated(unsafe) var outcome: Result<ApplyReport, Error>?
            // A thread of its own: on Dispatch's global pool, as wide as the cores, other tests'
            // blocking work could hold the apply back past the 3 s of reads.
            Thread {
                outcome = Result { try migrator.apply() }
                applied.signal()
            }.start()
            var waits: [TimeInterval] = []
            let readUntil = Date().addingTimeInterval(3)
            while Date() < readUntil {
                let started = Date()
                try reader.execute("SELECT count(*) FROM shop.item")
                waits.append(Date().timeIntervalSince(started))
                Thread.sleep(forTimeInterval: 0.05)
            }
            try longRead.execute("ROLLBACK")
            applied.wait()
            #expect(try outcome?.get().appliedSteps.count == 1)
            let longest = waits.max() ?? 0
            print("readers behind a queued ALTER: \(waits.count) reads in 3 s, longest wait \(String(format: "%.3f", longest)) s, \(waits.filter { $0 > 0.1 }.count) waited over 0.1 s")
            #expect(waits.filter { $0 > 0.1 }.count > 0, "no read queued behind the ALTER: the test proves nothing")
            #expect(longest < 1, "a reader waited \(longest) s")
            #expect(try rowCount(schema: "shop", table: "item", on: connection) == 100)
        }
    }

    /// A migration transaction whose process stops (SIGSTOP, a frozen container) while it holds
    /// ACCESS EXCLUSIVE: PostgreSQL ends the session after the idle timeout, and readers go on.
    @Test func aStoppedTransactionLosesItsLocksAfterTheIdleTimeout() throws {
        try TestDatabase.withFreshDatabase { url in
            let setup = try PostgresConnection(url: url)
            defer { setup.close() }
            try setup.execute("CREATE TABLE item (id int); INSERT INTO item VALUES (1)")
            let migration = try PostgresConnection(url: url)
            defer { migration.close() }
            let policy = ExecutionPolicy(lockTimeoutMilliseconds: 500, idleInTransactionTimeoutMilliseconds: 300, retries: RetrySchedule(attempts: 1))

            let reader = try PostgresConnection(url: url)
            defer { reader.close() }
            nonisolated(unsafe) var readerWait: TimeInterval?
            let read = DispatchSemaphore(value: 0)
            #expect(throws: PostgresError.self) {
                try policy.transaction(on: migration) {
                    try migration.execute("LOCK TABLE item IN ACCESS EXCLUSIVE MODE")
                    // A thread of its own: a block on Dispatch's global pool started late now
                    // and then (waits of 1 ms in 5 of 17 earlier runs: the lock was gone by then).
                    Thread {
                        let started = Date()
                        _ = try? reader.execute("SELECT count(*) FROM item")
                        readerWait = Date().timeIntervalSince(started)
                        read.signal()
                    }.start()
                    // The process is stopped here, between two statements, for 3 s.
                    Thread.sleep(forTimeInterval: 3)
                    try migration.execute("SELECT 1")
                }
            }
            read.wait()
            let wait = try #require(readerWait)
            print("a reader behind a stopped transaction with idle timeout 0.3 s waited \(String(format: "%.3f", wait)) s")
            #expect(wait < 2, "the reader waited \(wait) s: the stopped session kept its lock")
        }
    }
}
