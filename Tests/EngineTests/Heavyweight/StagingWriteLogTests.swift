import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// The staging tables' write log (`StagingWriteLog`): orchestrator's own writes are not in it,
/// another session's are, whenever they come (between two runs, or during a run before the
/// swap), even when they leave every count as it was; a staging schema without the log (made
/// by an earlier release) is counted instead.
@Suite(integration) struct StagingWriteLogTests {
    typealias S = MigratedStore

    static func logged(on connection: PostgresConnection) throws -> Int {
        Int(try connection.execute("SELECT count(*) AS n FROM \"shop~staging\".\(unsafeRaw: StagingWriteLog.table)").int(0, "n") ?? -1)
    }

    @Test func theRunnersOwnWritesAreNotLogged() throws {
        try ResumeTrustTests.interrupted { connection in
            // 20 recipes and their chefs were written by the interrupted run, streamed and set-based.
            #expect(try Self.logged(on: connection) == 0)
            #expect(try connection.execute("SELECT count(*) AS n FROM \"shop~staging\".chef").int(0, "n") ?? 0 > 0)
            _ = try ResumeTrustTests.migrator(failing: false, on: connection).apply()
            #expect(try S.version(on: connection) == "Kitchen 2")
            // The log and its triggers went with the swap: the live tables carry none.
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_trigger WHERE tgname = \(StagingWriteLog.trigger)").int(0, "n") == 0)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_proc WHERE proname = \(StagingWriteLog.function)").int(0, "n") == 0)
            #expect(try connection.execute("SELECT to_regclass('shop._staging_writes') IS NULL AS gone").bool(0, "gone") == true)
        }
    }

    @Test func stagingRowsUpdatedByHandBetweenRunsStopTheResumeThoughEveryCountIsTheSame() throws {
        try ResumeTrustTests.interrupted { connection in
            try connection.execute("UPDATE \"shop~staging\".recipe SET name = 'by hand' WHERE _pk = (SELECT min(_pk) FROM \"shop~staging\".recipe)")
            #expect(try Self.logged(on: connection) == 1)
            let before = try ResumeTrustTests.snapshot(on: connection)

            let refusal = #expect(throws: StagingMismatch.self) { _ = try ResumeTrustTests.migrator(failing: false, on: connection).apply() }
            let message = refusal?.description ?? ""
            #expect(message.contains("was changed outside orchestrator: shop~staging.recipe written by another session since it was made (1 UPDATE)"), "\(message)")
            #expect(message.contains("--restart"), "\(message)")
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try ResumeTrustTests.snapshot(on: connection) == before)
        }
    }

    /// RecipeToRecipe's policy writes the staging chef table on a session of its own while the
    /// run goes on, after ChefToChef's pass committed: the swap refuses.
    final class WritingByHand: EntityMigrationPolicy {
        func begin(_ mapping: EntityMappingContext) throws {
            let other = try mapping.connection.reconnect()
            defer { other.close() }
            try other.execute("UPDATE \"shop~staging\".chef SET name = name || ' (by hand)' WHERE _pk = (SELECT min(_pk) FROM \"shop~staging\".chef)")
        }
    }

    @Test func aStagingRowWrittenByAnotherSessionDuringTheRunStopsTheSwap() throws {
        try S.withStore(try HeavyweightMigrationTests.kitchen(), rows: 20) { connection in
            var mapping = HeavyweightMigrationTests.kitchenMapping()
            mapping.entityMappings[1].policy = "ByHand"
            var migrator = HeavyweightMigrationTests.migrator(try HeavyweightMigrationTests.kitchen(), mapping, on: connection)
            migrator.policies = PolicyRegistry()
            migrator.policies.register("ByHand") { WritingByHand() }
            let before = try ResumeTrustTests.snapshot(on: connection)

            let failure = #expect(throws: (any Error).self) { _ = try migrator.apply() }
            let message = failure.map { String(describing: $0) } ?? ""
            #expect(message.contains("was changed outside orchestrator: shop~staging.chef written by another session since it was made ("), "\(message)")
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try ResumeTrustTests.snapshot(on: connection) == before)
            #expect(try connection.execute("SELECT count(*) AS n FROM \"shop~staging\".chef WHERE name LIKE '%(by hand)'").int(0, "n") == 1)
        }
    }

    /// What an earlier release left: a staging schema without the log and its triggers.
    static func withoutLog(on connection: PostgresConnection) throws {
        try connection.execute("DROP FUNCTION \"shop~staging\".\(unsafeRaw: StagingWriteLog.function)() CASCADE")
        try connection.execute("DROP TABLE \"shop~staging\".\(unsafeRaw: StagingWriteLog.table)")
    }

    @Test func aStagingSchemaWithoutTheLogIsCountedAndResumes() throws {
        try ResumeTrustTests.interrupted { connection in
            try Self.withoutLog(on: connection)
            _ = try ResumeTrustTests.migrator(failing: false, on: connection).apply()
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == 20)
        }
    }

    @Test func rowsDeletedByHandFromAStagingSchemaWithoutTheLogAreCounted() throws {
        try ResumeTrustTests.interrupted { connection in
            try Self.withoutLog(on: connection)
            try connection.execute("DELETE FROM \"shop~staging\".recipe WHERE _pk % 2 = 0")
            let refusal = #expect(throws: StagingMismatch.self) { _ = try ResumeTrustTests.migrator(failing: false, on: connection).apply() }
            #expect(refusal?.description.contains("was changed outside orchestrator: shop~staging.recipe holds 10 row(s), 20 when pass") == true, "\(refusal.map(String.init(describing:)) ?? "")")
            #expect(try S.version(on: connection) == "Kitchen 1")
        }
    }

    @Test func aTriggerDisabledByHandFallsBackToTheCount() throws {
        try ResumeTrustTests.interrupted { connection in
            try connection.execute("ALTER TABLE \"shop~staging\".recipe DISABLE TRIGGER \(unsafeRaw: StagingWriteLog.trigger)")
            try connection.execute("DELETE FROM \"shop~staging\".recipe WHERE _pk % 2 = 0")
            #expect(try Self.logged(on: connection) == 0)
            let refusal = #expect(throws: StagingMismatch.self) { _ = try ResumeTrustTests.migrator(failing: false, on: connection).apply() }
            #expect(refusal?.description.contains("was changed outside orchestrator: shop~staging.recipe holds 10 row(s), 20 when pass") == true, "\(refusal.map(String.init(describing:)) ?? "")")
        }
    }
}
