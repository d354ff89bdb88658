import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// DDL waits at most lock_timeout for a table another session holds, then retries with backoff.
@Suite(integration) struct LockTimeoutTests {
    static func model() throws -> VersionedModel {
        try MigratedStore.model([
            ("Shop 1", MigratedStore.version("Item: {attributes: {name: string}}")),
            ("Shop 2", MigratedStore.version("Item: {attributes: {name: string, note: string}}")),
        ])
    }

    /// Another session holds an ACCESS EXCLUSIVE lock on the table in an open transaction.
    static func holdingLock(on url: String, _ body: (PostgresConnection) throws -> Void) throws {
        let blocker = try PostgresConnection(url: url)
        defer { blocker.close() }
        try blocker.execute("BEGIN; LOCK TABLE shop.item IN ACCESS EXCLUSIVE MODE")
        try body(blocker)
    }

    @Test func aLockHeldThroughoutFailsAfterTheRetriesAndChangesNothing() throws {
        let model = try Self.model()
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try SampleDataTests.createAndFill(model, version: "Shop 1", store: "shop", rows: 300, on: connection)
            try Self.holdingLock(on: url) { _ in
                let started = Date()
                let error = #expect(throws: StepFailure.self) {
                    try StoreMigrator(connection: connection, model: model, store: "shop")
                        .apply(options: ApplyOptions(lockTimeoutMilliseconds: 100, lockRetries: 3))
                }
                #expect((error?.underlying as? PostgresError)?.sqlState == SQLState.lockNotAvailable)
                // Three attempts of 100 ms each, with backoff between: well under a second or two.
                #expect(Date().timeIntervalSince(started) < 5)
            }
            #expect(try StoreCatalog.snapshot(store: "shop", on: connection).metadata?.versionName == "Shop 1")
            #expect(try !columns(in: "shop", table: "item", on: connection).map(\.name).contains("note"))
            #expect(try rowCount(schema: "shop", table: "item", on: connection) == 300)
        }
    }

    @Test func aLockReleasedDuringTheBackoffLetsTheRetrySucceed() throws {
        let model = try Self.model()
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try SampleDataTests.createAndFill(model, version: "Shop 1", store: "shop", rows: 300, on: connection)
            try Self.holdingLock(on: url) { blocker in
                let released = DispatchSemaphore(value: 0)
                // A thread of its own: Dispatch's global pool is as wide as the cores, and the
                // other tests' blocking work on it could hold the release past every retry.
                Thread {
                    Thread.sleep(forTimeInterval: 0.3)
                    _ = try? blocker.execute("ROLLBACK")
                    released.signal()
                }.start()
                let report = try StoreMigrator(connection: connection, model: model, store: "shop")
                    .apply(options: ApplyOptions(lockTimeoutMilliseconds: 100, lockRetries: 8))
                released.wait()
                #expect(report.appliedSteps.count == 1)
            }
            #expect(try StoreCatalog.snapshot(store: "shop", on: connection).metadata?.versionName == "Shop 2")
            #expect(try rowCount(schema: "shop", table: "item", on: connection) == 300)
        }
    }
}
