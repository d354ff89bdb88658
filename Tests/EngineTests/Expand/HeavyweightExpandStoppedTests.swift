import Foundation
import Testing
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 25, point 5: `rollback` of an `apply --expand` of a heavyweight step stopped before
/// its wait for `complete` (killed, or stopped by `--pause-timeout`): no views and no expansion
/// yet, but the staging schema, the change triggers on the store's tables and the checkpoints.
/// The rollback drops them; the store never left Kitchen 1, so every row the old release wrote
/// meanwhile is there, and a later `apply` gives the offline migration's result.
@Suite(integration) struct HeavyweightExpandStoppedTests {
    typealias S = MigratedStore
    typealias Kitchen = HeavyweightMigrationTests
    typealias Online = OnlineHeavyweightTests
    typealias Expand = HeavyweightExpandTests

    static func checkpoints(on connection: PostgresConnection) throws -> Int64? {
        try connection.execute("SELECT count(*) AS n FROM orchestrator.checkpoints WHERE store = \(S.store) AND kind = 'heavyweight'").int(0, "n")
    }

    /// The old release's writes after the run stopped, then the rollback's checks: Kitchen 1
    /// with every row, nothing of the step left, a `rollback` row, and the offline result
    /// from a later `apply`.
    static func expectRolledBack(_ report: RollbackReport, on connection: PostgresConnection) throws {
        #expect(report.fromVersion == "Kitchen 2" && report.version == "Kitchen 1" && report.losses.isEmpty, "\(report)")
        #expect(report.statements == [#"DROP SCHEMA IF EXISTS "shop~staging" CASCADE"#] && report.viewsSchema == "shop~staging", "\(report)")
        let reference = try Online.offlineMigration(after: Online.concurrent)
        #expect(try S.version(on: connection) == "Kitchen 1")
        #expect(try Online.sourceSnapshot(S.store, on: connection) == reference.source)
        try Online.expectNoTriggersLeft(on: connection)
        #expect(try !Expand.schemaExists("shop~staging", on: connection) && !Expand.schemaExists(Expand.views, on: connection))
        #expect(try Self.checkpoints(on: connection) == 0)
        #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.controls WHERE store = \(S.store) AND postponed IS NOT NULL").int(0, "n") == 0)
        let last = try connection.execute("""
            SELECT kind, from_version, to_version, (to_hash = (SELECT model_hash FROM orchestrator.stores WHERE store = \(S.store)))::text AS same
            FROM orchestrator.migrations WHERE store = \(S.store) ORDER BY id DESC LIMIT 1
            """)
        #expect(last.rows.first == ["rollback", "Kitchen 2", "Kitchen 1", "true"], "\(last.rows)")
        #expect(throws: NothingToRollBack.self) { try ExpansionRollback(connection: connection, store: S.store).rollBack() }
        // The store migrates as if nothing had happened, the step started afresh.
        var events: [ProgressEvent] = []
        _ = try Kitchen.migrator(try Kitchen.kitchen(), Kitchen.kitchenMapping(), on: connection).apply(onProgress: { events.append($0) })
        #expect(!events.contains { $0.kind == .passFinished && $0.resumed })
        TwinComparison.expectSameRows(try Online.snapshot(S.store, on: connection), reference.migrated)
    }

    @Test func rollbackOfAnExpandKilledBeforeItsWaitDropsTheStagingWorkKeepingEveryRow() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            try Online.crashOnlineRun(options: Expand.options(), on: connection, { Kitchen.migrator(model, Kitchen.kitchenMapping(), on: $0) }) {
                $0.kind == .passFinished && $0.entityMapping == "ChefToChef"
            }
            #expect(try Expand.schemaExists("shop~staging", on: connection) && Self.checkpoints(on: connection) ?? 0 > 0)
            #expect(try ExpansionRecord.read(store: S.store, on: connection) == nil && !Expand.schemaExists(Expand.views, on: connection))
            // The old release writes on, through the change triggers the run left.
            for write in Online.concurrent { try connection.execute(write) }
            #expect(try connection.execute(#"SELECT count(*) AS n FROM "shop~staging"._row_changes"#).int(0, "n") ?? 0 > 0)

            let dry = try ExpansionRollback(connection: connection, store: S.store).rollBack(dryRun: true)
            #expect(dry.isDryRun && dry.statements == [#"DROP SCHEMA IF EXISTS "shop~staging" CASCADE"#])
            #expect(try Expand.schemaExists("shop~staging", on: connection))
            let report = try ExpansionRollback(connection: connection, store: S.store).rollBack()
            #expect(report.endedSessions.isEmpty)
            try Self.expectRolledBack(report, on: connection)
        }
    }

    @Test func rollbackOfAnExpandStillRunningBeforeItsWaitNamesItThenForceEndsIt() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            try StoreControls.set(store: S.store, paused: true, on: connection)
            let run = try BackgroundApply(Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection), options: Expand.options(), from: connection)
            defer { run.end(on: connection) }
            #expect(run.waitForEvent { $0.kind == .paused && $0.reason?.hasPrefix(StoreControls.pausedReason) == true }, "the run never paused: \(run.events.suffix(3))")
            for write in Online.concurrent { try connection.execute(write) }

            let refused = try #require(throws: ExpandedRunWaiting.self) { try ExpansionRollback(connection: connection, store: S.store).rollBack() }
            #expect(refused.description.contains("an apply run of its heavyweight step 'Kitchen 1' -> 'Kitchen 2' is still under way, before its switch-over"), "\(refused)")
            #expect(try Expand.schemaExists("shop~staging", on: connection) && !run.hasEnded)

            let report = try ExpansionRollback(connection: connection, store: S.store).rollBack(force: true)
            #expect(!report.endedSessions.isEmpty)
            let ended = try #require(run.result(), "the run did not stop")
            #expect((try? ended.get()) == nil, "the run went on after the rollback")
            try StoreControls.set(store: S.store, paused: false, on: connection)
            try Self.expectRolledBack(report, on: connection)
        }
    }
}
