import Foundation
import Testing
import PostgresClient
import TestSupport
@testable import Engine

/// Issue 24, item 5: what `status` reads of a running `apply` (`orchestrator.runs`), from
/// another session.
@Suite(integration) struct RunningMigrationTests {
    typealias S = MigratedStore

    /// Pauses as the replication throttle does, until `release`d.
    final class Throttle: BetweenBatches, @unchecked Sendable {
        private let lock = NSLock()
        private var held = true

        func release() { lock.withLock { held = false } }

        func decide(at position: BatchPosition, on connection: PostgresConnection) throws -> BatchDecision {
            lock.withLock { held } ? .pause(reason: "throttled: standby s1 replay lag 12.4 s") : .proceed
        }
    }

    @Test func aThrottledRunShowsItsPhaseRowsAndReasonAndNothingRunsOnceItEnds() throws {
        try BatchRunnerTests.withSparseItems { _, connection in
            #expect(try RunningMigration.read(store: S.store, on: connection) == nil)
            let throttle = Throttle()
            var options = BatchRunnerTests.options()
            options.betweenBatches = [throttle]
            let run = try BackgroundApply(StoreMigrator(connection: connection, model: try BatchRunnerTests.model(), store: S.store), options: options, from: connection)
            defer { run.end(on: connection) }
            #expect(run.waitForEvent { $0.kind == .paused }, "the run never waited")
            let throttled = try #require(try RunningMigration.read(store: S.store, on: connection))
            #expect(throttled.state == .throttled, "\(throttled)")
            #expect(throttled.reason == "throttled: standby s1 replay lag 12.4 s")
            #expect(throttled.step == "step 1 of 1: lightweight 'v1' -> 'v2'")
            #expect(throttled.phase?.contains("item.rating") == true, "\(throttled)")
            #expect(throttled.rowsDone == 5, "\(throttled)")
            #expect(throttled.pid > 0 && throttled.updatedAt.hasSuffix("Z"))

            throttle.release()
            _ = try #require(run.result(), "the run did not finish once released").get()
            #expect(try RunningMigration.read(store: S.store, on: connection) == nil)
            #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.runs").int(0, "n") == 0)
        }
    }

    @Test func aRowLeftByAKilledRunIsNotARunningMigration() throws {
        try TestDatabase.withFreshConnection { connection in
            try MetadataSchema.bootstrap(on: connection)
            let session = try connection.reconnect()
            RunRecord(store: "shop", connection: session).step(1, of: 1, kind: "lightweight", from: "v1", to: "v2")
            #expect(try RunningMigration.read(store: "shop", on: connection)?.state == .running)
            session.close()
            // The session's end is seen by pg_stat_activity within moments: wait for it, bounded.
            let deadline = Date().addingTimeInterval(60)
            while try RunningMigration.read(store: "shop", on: connection) != nil, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
            #expect(try RunningMigration.read(store: "shop", on: connection) == nil)
            #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.runs").int(0, "n") == 1)
        }
    }
}
