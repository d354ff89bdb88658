import Foundation
import Testing
import ObjectModel
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 24, item 5: `apply --online --postpone-switch-over` does all its work, then waits
/// before the switch-over, the application writing, until `orchestrator control proceed`.
@Suite(integration) struct PostponedSwitchOverTests {
    typealias S = MigratedStore
    static let postponed = "switch-over postponed"

    static func options(timeoutSeconds: Double = 600) -> ApplyOptions {
        var options = ApplyOptions(lockTimeoutMilliseconds: 2000, batchSize: 7, online: true)
        options.postponeSwitchOver = true
        options.postponeTimeoutSeconds = timeoutSeconds
        return options
    }

    static func controls(on connection: PostgresConnection) throws -> [String?] {
        try connection.execute("SELECT postponed, proceed::text FROM orchestrator.controls WHERE store = \(S.store)").rows.first ?? []
    }

    @Test func aPostponedLightweightStepWaitsWithWritesGoingOnAndSwitchesOverOnProceedWithNothingLost() throws {
        let model = try OnlineMigrationTests.model()
        try ShadowedStore.with(model, store: S.store, shadow: OnlineMigrationTests.shadow) { connection, url in
            let writer = RecipeWrites.writer(url: url, live: S.store, shadow: OnlineMigrationTests.shadow)
            writer.start()
            var writerStopped = false
            defer { if !writerStopped { writer.stop() } }
            let run = try BackgroundApply(StoreMigrator(connection: connection, model: model, store: S.store), options: Self.options(), from: connection)
            defer { run.end(on: connection) }
            #expect(run.waitForEvent { $0.kind == .paused && $0.reason?.hasPrefix(Self.postponed) == true }, "the run never waited to switch over: \(run.events.suffix(3))")

            // Every phase but the switch-over is done; the store stays at v1 while writes go on.
            let running = try #require(try RunningMigration.read(store: S.store, on: connection))
            #expect(running.state == .waitingToSwitchOver, "\(running)")
            #expect(running.step == "step 1 of 1: lightweight 'v1' -> 'v2'", "\(running)")
            #expect(running.reason?.contains("orchestrator control proceed --store shop") == true, "\(running)")
            let before = writer.commits
            writer.waitForCommits(before + 20)
            #expect(writer.commits - before >= 20, "the application's writes did not go on while the run waited")
            #expect(writer.failure == nil, "\(String(describing: writer.failure))")
            #expect(try S.version(on: connection) == "v1")
            #expect(!run.hasEnded)

            #expect(try StoreControls.proceed(store: S.store, on: connection)?.hasPrefix("'v1' -> 'v2' (plan ") == true)
            let result = try #require(run.result(), "the run did not finish after proceed")
            _ = try result.get()
            writer.stop()
            writerStopped = true
            if let failure = writer.failure { #expect(failure.afterSwitchOver, "a write failed before the switch-over: \(failure.error)") }
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, on: connection)
            #expect(try Self.controls(on: connection) == [nil, "false"], "the switch-over clears the postponement")
            #expect(try RunningMigration.read(store: S.store, on: connection) == nil)
        }
    }

    /// A proceed given before the run (left over) does not let it skip its wait; one given
    /// after a run stopped at `--postpone-timeout` lets the next `apply` switch over.
    @Test func aLeftoverProceedDoesNotCountTheTimeoutStopsResumablyAndAProceedLetsTheNextApplySwitchOver() throws {
        try BatchRunnerTests.withSparseItems { _, connection in
            let migrator = StoreMigrator(connection: connection, model: try BatchRunnerTests.model(), store: S.store)
            #expect(try StoreControls.proceed(store: S.store, on: connection) == nil)
            var events: [ProgressEvent] = []
            let failure = try #require(throws: StepFailure.self) {
                try migrator.apply(options: Self.options(timeoutSeconds: 1), onProgress: { events.append($0) })
            }
            #expect(failure.description.contains("the switch-over of 'v1' -> 'v2' (plan "), "\(failure)")
            #expect(failure.description.contains("waited for orchestrator control proceed --store shop for longer than --postpone-timeout (1 s)"), "\(failure)")
            #expect(failure.description.contains("apply again continues"), "\(failure)")
            #expect(events.filter { $0.kind == .paused && $0.reason?.hasPrefix(Self.postponed) == true }.count == 1, "\(events.filter { $0.kind == .paused })")
            // Every row was backfilled; the checkpoint stands before the switch-over.
            #expect(try BatchRunnerTests.backfilled(on: connection) == 20)
            #expect(try S.version(on: connection) == "v1")
            #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.online_progress WHERE store = 'shop'").int(0, "n") == 1)
            #expect(try RunningMigration.read(store: S.store, on: connection) == nil)
            let held = try Self.controls(on: connection)
            #expect(held.first??.hasPrefix("'v1' -> 'v2' (plan ") == true && held.last == "false", "\(held)")

            let step = try #require(try StoreControls.proceed(store: S.store, on: connection))
            #expect(held.first == step)
            _ = try migrator.apply(options: Self.options(timeoutSeconds: 1))
            #expect(try S.version(on: connection) == "v2")
            #expect(try Self.controls(on: connection) == [nil, "false"])
            #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.online_progress").int(0, "n") == 0)
        }
    }

    /// Heavyweight: the passes, rounds and stage 3's build done, the run keeps mapping the
    /// writes in rounds while it waits; a pause holds it even once proceed is given.
    @Test func aPostponedHeavyweightStepKeepsCatchingUpHoldsWhilePausedAndSwitchesOverWithNothingLost() throws {
        typealias Kitchen = HeavyweightMigrationTests
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            var options = Self.options()
            options.catchUpRemainder = 0
            let run = try BackgroundApply(Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection), options: options, from: connection)
            defer { run.end(on: connection) }
            #expect(run.waitForEvent { $0.kind == .paused && $0.reason?.hasPrefix(Self.postponed) == true }, "the run never waited to switch over: \(run.events.suffix(3))")
            let waiting = try #require(try RunningMigration.read(store: S.store, on: connection))
            #expect(waiting.state == .waitingToSwitchOver && waiting.step == "step 1 of 1: heavyweight 'Kitchen 1' -> 'Kitchen 2'", "\(waiting)")

            let writer = try TwinWriter.script(sessionsLike: connection, OnlineHeavyweightTests.concurrent)
            writer.start()
            #expect(writer.waitUntilDone(), "the writer never finished")
            #expect(writer.failure == nil, "the application's writes failed while the run waited: \(String(describing: writer.failure))")
            #expect(try S.version(on: connection) == "Kitchen 1")

            try StoreControls.set(store: S.store, paused: true, on: connection)
            #expect(run.waitForEvent { $0.kind == .paused && $0.reason?.hasPrefix(StoreControls.pausedReason) == true }, "the waiting run did not see the pause")
            let paused = try #require(try RunningMigration.read(store: S.store, on: connection))
            #expect(paused.state == .paused && paused.phase?.hasSuffix("catchUp") == true, "\(paused)")
            #expect(try StoreControls.proceed(store: S.store, on: connection) != nil)
            // Paused, the run does not switch over, proceed or not (checked after a few polls).
            Thread.sleep(forTimeInterval: 3)
            #expect(!run.hasEnded)
            #expect(try S.version(on: connection) == "Kitchen 1")

            try StoreControls.set(store: S.store, paused: false, on: connection)
            let result = try #require(run.result(), "the run did not finish once resumed")
            _ = try result.get()
            #expect(try S.version(on: connection) == "Kitchen 2")
            try OnlineHeavyweightTests.expectNoTriggersLeft(on: connection)
            let reference = try OnlineHeavyweightTests.offlineMigration(after: OnlineHeavyweightTests.concurrent)
            #expect(try OnlineHeavyweightTests.sourceSnapshot("shop~", on: connection) == reference.source)
            TwinComparison.expectSameRows(try OnlineHeavyweightTests.snapshot(S.store, on: connection), reference.migrated)
            #expect(try RunningMigration.read(store: S.store, on: connection) == nil)
            #expect(try Self.controls(on: connection) == [nil, "false"])
        }
    }

    /// Gives `orchestrator control proceed` (on a session of its own) between the first two batches.
    struct ProceedDuringTheWork: BetweenBatches {
        func decide(at position: BatchPosition, on connection: PostgresConnection) throws -> BatchDecision {
            let session = try connection.reconnect()
            defer { session.close() }
            try StoreControls.proceed(store: position.store, on: session)
            return .proceed
        }
    }

    @Test func aProceedGivenWhileTheStepStillWorksLetsItSwitchOverWithoutWaiting() throws {
        try BatchRunnerTests.withSparseItems { _, connection in
            var options = Self.options()
            options.betweenBatches = [ProceedDuringTheWork()]
            var events: [ProgressEvent] = []
            _ = try StoreMigrator(connection: connection, model: try BatchRunnerTests.model(), store: S.store).apply(options: options, onProgress: { events.append($0) })
            #expect(events.filter { $0.kind == .paused }.isEmpty, "\(events.filter { $0.kind == .paused })")
            #expect(try S.version(on: connection) == "v2")
            #expect(try Self.controls(on: connection) == [nil, "false"])
        }
    }
}
