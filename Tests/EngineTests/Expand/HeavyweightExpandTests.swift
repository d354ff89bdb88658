import Foundation
import Testing
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 25, point 3: `apply --expand` of a heavyweight step. The old release (Kitchen 1) writes
/// the store's tables through the whole run; the new version (Kitchen 2) is read, in its shape,
/// through `"shop@Kitchen_2"`, views over the staging tables that the rounds keep carrying the
/// old release's writes into, and refuses writes until `complete` switches over. `rollback`
/// instead drops the staging work and keeps every row.
@Suite(integration) struct HeavyweightExpandTests {
    typealias S = MigratedStore
    typealias Kitchen = HeavyweightMigrationTests
    typealias Online = OnlineHeavyweightTests
    static let views = "shop@Kitchen_2"

    static func options() -> ApplyOptions {
        var options = ApplyOptions(lockTimeoutMilliseconds: 2000, batchSize: 7, online: true)
        options.expand = true
        return options
    }

    /// The old release's writes: the online heavyweight tests' concurrent script, in two halves.
    static let firstHalf = Array(Online.concurrent.prefix(Online.concurrent.count / 2))
    static let secondHalf = Array(Online.concurrent.dropFirst(Online.concurrent.count / 2))

    /// Starts `apply --expand` with the old release's first half of writes going on; returns
    /// once the run waits for `complete` and the writer is done.
    static func expanded(on connection: PostgresConnection) throws -> BackgroundApply {
        let writer = try TwinWriter.script(sessionsLike: connection, firstHalf, every: 0.01)
        writer.start()
        let run = try BackgroundApply(Kitchen.migrator(try Kitchen.kitchen(), Kitchen.kitchenMapping(), on: connection), options: options(), from: connection)
        #expect(run.waitForEvent { $0.kind == .paused && $0.reason?.hasPrefix("switch-over postponed") == true }, "the run never waited for complete: \(run.events.suffix(3))")
        #expect(writer.waitUntilDone(), "the old release's writer never finished")
        #expect(writer.failure == nil, "the old release's writes failed: \(String(describing: writer.failure))")
        return run
    }

    /// Polls (at most 30 s) until the new version's views read `expected`, as the rounds catch up.
    static func expectViewsReach(_ expected: [[String?]], on connection: PostgresConnection) throws {
        let deadline = Date().addingTimeInterval(30)
        var read = try Online.snapshot(views, on: connection)
        while read != expected, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.3)
            read = try Online.snapshot(views, on: connection)
        }
        TwinComparison.expectSameRows(read, expected)
    }

    static func kinds(on connection: PostgresConnection) throws -> [String?] {
        try connection.execute("SELECT kind FROM orchestrator.migrations WHERE store = 'shop' ORDER BY id").rows.map { $0[0] }
    }

    static func schemaExists(_ schema: String, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname = \(schema)").int(0, "n") == 1
    }

    @Test func theNewVersionIsReadOnlyInItsViewsWhileTheOldReleaseWritesAndCompleteSwitchesOverAsOfflineWould() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            let run = try Self.expanded(on: connection)
            defer { run.end(on: connection) }
            let expansion = try #require(try ExpansionRecord.read(store: S.store, on: connection))
            #expect(expansion.oldVersion == "Kitchen 1" && expansion.newVersion == "Kitchen 2" && expansion.viewsSchema == Self.views)
            #expect(try S.version(on: connection) == "Kitchen 1")

            // The new version reads the old release's rows in its shape, then its later writes after a round.
            try Self.expectViewsReach(try Online.offlineMigration(after: Self.firstHalf).migrated, on: connection)
            let writer = try TwinWriter.script(sessionsLike: connection, Self.secondHalf, every: 0.005)
            writer.start()
            #expect(writer.waitUntilDone() && writer.failure == nil, "\(String(describing: writer.failure))")
            let reference = try Online.offlineMigration(after: OnlineHeavyweightTests.concurrent)
            try Self.expectViewsReach(reference.migrated, on: connection)

            // Writes through the new version fail with the reason, even those touching no row.
            for write: SQL in [
                "INSERT INTO \(ident: Self.views, "chef") (_entity, name) VALUES ('Chef', 'new release chef')",
                "UPDATE \(ident: Self.views, "recipe") SET total_cost = 0 WHERE _pk = 20",
                "DELETE FROM \(ident: Self.views, "recipe") WHERE false",
            ] {
                let failure = try #require(throws: PostgresError.self) { try connection.execute(write) }
                #expect(failure.sqlState == .readOnlySQLTransaction, "\(failure)")
                #expect(failure.message.contains(#"store shop: version 'Kitchen 2' is served read-only in "shop@Kitchen_2" until orchestrator complete --store shop"#), "\(failure)")
            }

            // complete is refused while a session reads the new version mid-transaction.
            let reader = try connection.reconnect()
            defer { reader.close() }
            try reader.execute("BEGIN")
            try reader.execute("SELECT count(*) FROM \(ident: Self.views, "recipe")")
            #expect(throws: OldVersionInUse.self) { try ExpansionCompletion(connection: connection, store: S.store).complete(force: false) }
            try reader.execute("ROLLBACK")
            #expect(try !run.hasEnded && S.version(on: connection) == "Kitchen 1")

            let report = try ExpansionCompletion(connection: connection, store: S.store).complete(force: false)
            #expect(report.switchedOver && report.newVersion == "Kitchen 2")
            _ = try #require(run.result(), "the run did not finish after complete").get()
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try Online.sourceSnapshot("shop~", on: connection) == reference.source)
            TwinComparison.expectSameRows(try Online.snapshot(S.store, on: connection), reference.migrated)
            try Online.expectNoTriggersLeft(on: connection)
            #expect(try !Self.schemaExists(Self.views, on: connection))
            #expect(try ExpansionRecord.read(store: S.store, on: connection) == nil)
            #expect(try Self.kinds(on: connection).suffix(3) == ["expand", "complete", "heavyweight"])
        }
    }

    @Test func rollbackDropsTheStagingWorkAndTheViewsKeepingEveryRowTheOldReleaseWrote() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            let run = try Self.expanded(on: connection)
            defer { run.end(on: connection) }
            #expect(try Self.schemaExists(Self.views, on: connection))
            let writer = try TwinWriter.script(sessionsLike: connection, Self.secondHalf, every: 0.005)
            writer.start()
            #expect(writer.waitUntilDone() && writer.failure == nil, "\(String(describing: writer.failure))")

            // The run waiting for complete is named; --force ends it.
            #expect(throws: ExpandedRunWaiting.self) { try ExpansionRollback(connection: connection, store: S.store).rollBack() }
            let dry = try ExpansionRollback(connection: connection, store: S.store).rollBack(dryRun: true)
            #expect(dry.statements == [#"DROP SCHEMA IF EXISTS "shop@Kitchen_2" CASCADE"#, #"DROP SCHEMA IF EXISTS "shop~staging" CASCADE"#] && dry.losses.isEmpty)
            let report = try ExpansionRollback(connection: connection, store: S.store).rollBack(force: true)
            #expect(!report.endedSessions.isEmpty && report.version == "Kitchen 1")
            let ended = try #require(run.result(), "the run did not stop")
            #expect((try? ended.get()) == nil, "the run waiting for complete went on after the rollback")
            // Its message no longer offers to continue: the staging work is gone.
            if case .failure(let error) = ended { #expect(!"\(error)".contains("apply again continues"), "\(error)") }

            let reference = try Online.offlineMigration(after: OnlineHeavyweightTests.concurrent)
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try Online.sourceSnapshot(S.store, on: connection) == reference.source)
            try Online.expectNoTriggersLeft(on: connection)
            #expect(try !Self.schemaExists(Self.views, on: connection) && !Self.schemaExists("shop~staging", on: connection))
            #expect(try ExpansionRecord.read(store: S.store, on: connection) == nil)
            #expect(try Self.kinds(on: connection).suffix(2) == ["expand", "rollback"])
            // The store migrates as if nothing had happened.
            _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply()
            TwinComparison.expectSameRows(try Online.snapshot(S.store, on: connection), reference.migrated)
        }
    }

    /// The run gone (a crash, a kill) while it waited: `complete` gives the proceed and says so;
    /// `apply --expand` again continues the step and switches over at once.
    @Test func completeWithTheRunGoneIsFinishedByApplyExpandAgain() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            let run = try Self.expanded(on: connection)
            defer { run.end(on: connection) }
            for holder in try connection.advisoryLockHolders(key: StoreLock(store: S.store, connection: connection).key) {
                try connection.execute("SELECT pg_terminate_backend(\(literal: Int64(holder.pid)))")
            }
            _ = run.result()
            let failure = try #require(throws: NoRunToSwitchOver.self) { try ExpansionCompletion(connection: connection, store: S.store).complete(force: false) }
            #expect(failure.description.contains("run apply --expand again"), "\(failure)")
            #expect(try Self.schemaExists(Self.views, on: connection) && S.version(on: connection) == "Kitchen 1")

            let writer = try TwinWriter.script(sessionsLike: connection, Self.secondHalf, every: 0.002)
            writer.start()
            #expect(writer.waitUntilDone() && writer.failure == nil, "\(String(describing: writer.failure))")
            _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply(options: Self.options())
            let reference = try Online.offlineMigration(after: OnlineHeavyweightTests.concurrent)
            #expect(try S.version(on: connection) == "Kitchen 2")
            TwinComparison.expectSameRows(try Online.snapshot(S.store, on: connection), reference.migrated)
            #expect(try !Self.schemaExists(Self.views, on: connection))
            #expect(try ExpansionRecord.read(store: S.store, on: connection) == nil)
            #expect(try Self.kinds(on: connection).suffix(3) == ["expand", "complete", "heavyweight"])
        }
    }
}
