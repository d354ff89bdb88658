import Foundation
import Testing
import ObjectModel
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 21, one runner: keyset batches, and the hook asked between them (`orchestrator
/// control pause|resume`, a caller's own).
@Suite(integration) struct BatchRunnerTests {
    typealias S = MigratedStore

    /// `rating` made required with a default: under `--online`, a batched backfill of `item`.
    static func model() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("Item: {attributes: {name: string, rating: int16}}")),
            ("v2", S.version("Item: {attributes: {name: string, rating: {type: int16, optional: false, default: 0}}}")),
        ])
    }

    /// 20 items whose keys are a million apart, every rating NULL.
    static func withSparseItems(_ body: (String, PostgresConnection) throws -> Void) throws {
        let model = try model()
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try SampleDataTests.createAndFill(model, version: "v1", store: S.store, rows: 0, on: connection)
            try connection.execute("""
                INSERT INTO shop.item (_pk, _entity, name) OVERRIDING SYSTEM VALUE
                SELECT i * 1000000, 'Item', 'item ' || i FROM generate_series(1, 20) AS i
                """)
            try body(url, connection)
        }
    }

    static func options(pauseTimeoutSeconds: Double = ApplyOptions.defaultPauseTimeoutSeconds) -> ApplyOptions {
        var options = ApplyOptions(lockTimeoutMilliseconds: 2000, batchSize: 5, online: true)
        options.pauseTimeoutSeconds = pauseTimeoutSeconds
        return options
    }

    static func backfilled(on connection: PostgresConnection) throws -> Int64? {
        try connection.execute("SELECT count(*) AS n FROM shop.item WHERE rating = 0").int(0, "n")
    }

    @Test func batchesWalkTheKeysPresentSoSparseKeysCostNoEmptyBatch() throws {
        try Self.withSparseItems { _, connection in
            var events: [ProgressEvent] = []
            let migrator = StoreMigrator(connection: connection, model: try Self.model(), store: S.store)
            _ = try migrator.apply(options: Self.options(), onProgress: { events.append($0) })
            // Ranges of 5 keys from min to max would have been 4 million batches.
            let batches = events.filter { $0.kind == .rows && $0.stage == .online }.map(\.rowsDone)
            #expect(batches == [5, 10, 15, 20])
            #expect(try Self.backfilled(on: connection) == 20)
            #expect(try S.version(on: connection) == "v2")
        }
    }

    @Test func aPausedStoreStopsAfterThePauseTimeoutWithItsCheckpointAndTheNextApplyContinues() throws {
        try Self.withSparseItems { _, connection in
            try StoreControls.set(store: S.store, paused: true, on: connection)
            var events: [ProgressEvent] = []
            let migrator = StoreMigrator(connection: connection, model: try Self.model(), store: S.store)
            let started = Date()
            let failure = try #require(throws: StepFailure.self) {
                try migrator.apply(options: Self.options(pauseTimeoutSeconds: 1), onProgress: { events.append($0) })
            }
            let waited = Date().timeIntervalSince(started)
            #expect(waited >= 0.9 && waited < 120, "waited \(waited) s")
            #expect(failure.description.contains("paused by orchestrator control"), "\(failure)")
            #expect(failure.description.contains("for longer than --pause-timeout (1 s)"), "\(failure)")
            let paused = events.filter { $0.kind == .paused }
            #expect(paused.count == 1 && paused.first?.reason?.hasPrefix("paused by orchestrator control") == true, "\(paused)")
            // The first batch committed with its checkpoint; nothing after it ran.
            #expect(try Self.backfilled(on: connection) == 5)
            let checkpoint = try connection.execute("SELECT next_key FROM orchestrator.online_progress WHERE store = 'shop'")
            #expect(checkpoint.int(0, "next_key") == 5_000_001)
            #expect(try S.version(on: connection) == "v1")

            try StoreControls.set(store: S.store, paused: false, on: connection)
            var resumed: [ProgressEvent] = []
            _ = try migrator.apply(options: Self.options(), onProgress: { resumed.append($0) })
            #expect(resumed.filter { $0.kind == .rows && $0.stage == .online }.map(\.rowsDone) == [5, 10, 15])
            #expect(try Self.backfilled(on: connection) == 20)
            #expect(try S.version(on: connection) == "v2")
            #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.online_progress").int(0, "n") == 0)
        }
    }

    @Test func aRunPausedBetweenBatchesGoesOnWhenTheStoreIsResumed() throws {
        try Self.withSparseItems { url, connection in
            try StoreControls.set(store: S.store, paused: true, on: connection)
            let sawPause = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
            let outcome = Outcome()
            let model = try Self.model()
            Thread.detachNewThread {
                do {
                    let session = try PostgresConnection(url: url)
                    defer { session.close() }
                    _ = try StoreMigrator(connection: session, model: model, store: S.store).apply(options: Self.options(), onProgress: { event in
                        if event.kind == .paused { sawPause.signal() }
                    })
                } catch {
                    outcome.error = error
                }
                finished.signal()
            }
            #expect(sawPause.wait(timeout: .now() + 120) == .success, "the run never paused")
            #expect(try Self.backfilled(on: connection) == 5)
            try StoreControls.set(store: S.store, paused: false, on: connection)
            #expect(finished.wait(timeout: .now() + 120) == .success, "the resumed run never finished")
            #expect(outcome.error == nil, "\(String(describing: outcome.error))")
            #expect(try Self.backfilled(on: connection) == 20)
            #expect(try S.version(on: connection) == "v2")
        }
    }

    @Test func aHookThatStopsEndsTheRunCleanlyAndOneThatSlowsLetsItFinish() throws {
        try Self.withSparseItems { _, connection in
            let migrator = StoreMigrator(connection: connection, model: try Self.model(), store: S.store)
            var options = Self.options()
            options.betweenBatches = [Answer(after: 10, decision: .stop(reason: "replica lag 40 s"))]
            let failure = try #require(throws: StepFailure.self) { try migrator.apply(options: options) }
            #expect(failure.description.contains("store shop: stopped between batches: replica lag 40 s"), "\(failure)")
            #expect(try Self.backfilled(on: connection) == 10)

            options.betweenBatches = [Answer(after: 0, decision: .slow(seconds: 0.01))]
            _ = try migrator.apply(options: options)
            #expect(try Self.backfilled(on: connection) == 20)
            #expect(try S.version(on: connection) == "v2")
        }
    }

    @Test func aHeavyweightStepStoppedBetweenPassesContinuesAfterItsLastPass() throws {
        let model = try HeavyweightMigrationTests.kitchen()
        try S.withStore(model, rows: 30) { connection in
            let migrator = HeavyweightMigrationTests.migrator(model, HeavyweightMigrationTests.kitchenMapping(), on: connection)
            var options = ApplyOptions(jobs: 1)
            options.betweenBatches = [Answer(after: 0, decision: .stop(reason: "stopped by the test"))]
            let failure = try #require(throws: StepFailure.self) { try migrator.apply(options: options) }
            #expect(failure.description.contains("stopped between batches: stopped by the test"), "\(failure)")
            #expect(failure.partialWork == "shop~staging")
            #expect(try S.version(on: connection) == "Kitchen 1")

            var events: [ProgressEvent] = []
            _ = try migrator.apply(options: ApplyOptions(jobs: 1), onProgress: { events.append($0) })
            #expect(events.filter { $0.kind == .passFinished && $0.resumed }.map(\.pass) == [1])
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == 30)
        }
    }

    @Test func aPauseWhileTheWriteGuardIsHeldStopsAtOnceRatherThanHoldTheApplicationsWrites() throws {
        let model = try HeavyweightMigrationTests.kitchen()
        try S.withStore(model, rows: 10) { connection in
            try StoreControls.set(store: S.store, paused: true, on: connection)
            let migrator = HeavyweightMigrationTests.migrator(model, HeavyweightMigrationTests.kitchenMapping(), on: connection)
            let started = Date()
            let failure = try #require(throws: StepFailure.self) { try migrator.apply(options: ApplyOptions(jobs: 1)) }
            #expect(Date().timeIntervalSince(started) < 60)
            #expect(failure.description.contains("paused by orchestrator control"), "\(failure)")
            #expect(failure.description.contains("the run holds the write guard"), "\(failure)")
            try StoreControls.set(store: S.store, paused: false, on: connection)
            _ = try migrator.apply(options: ApplyOptions(jobs: 1))
            #expect(try S.version(on: connection) == "Kitchen 2")
        }
    }

    @Test func metadataOfLayoutTwoGainsTheControlsTableInPlace() throws {
        try TestDatabase.withFreshConnection { connection in
            try MetadataSchema.bootstrap(on: connection)
            try connection.execute("DROP TABLE orchestrator.controls")
            try connection.execute("UPDATE orchestrator.meta SET value = '2' WHERE key = 'layout_version'")
            #expect(try StoreControls.isPaused(store: "shop", on: connection) == false)
            #expect(try StoreControls.set(store: "shop", paused: true, on: connection) == false)
            #expect(try connection.execute("SELECT value FROM orchestrator.meta WHERE key = 'layout_version'").value(0, "value") == "\(MetadataSchema.layoutVersion)")
            #expect(try StoreControls.isPaused(store: "shop", on: connection))
            #expect(try StoreControls.set(store: "shop", paused: false, on: connection) == true)
            #expect(try StoreControls.isPaused(store: "shop", on: connection) == false)
        }
    }
}

/// Answers `decision` once `after` rows of the unit of work are done, `proceed` before.
struct Answer: BetweenBatches {
    var after: Int
    var decision: BatchDecision

    func decide(at position: BatchPosition, on connection: PostgresConnection) throws -> BatchDecision {
        position.rowsDone >= after ? decision : .proceed
    }
}

/// What the background run ended with.
private final class Outcome: @unchecked Sendable {
    var error: Error?
}
