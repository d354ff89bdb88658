import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// A heavyweight step continued after an interruption trusts its checkpoints only when the old
/// store was not written since and the staging tables hold what the checkpoints counted;
/// otherwise it stops, naming what differs, with the store unchanged.
@Suite(integration) struct ResumeTrustTests {
    typealias S = MigratedStore

    /// Stage 3 fails in the first run, after every other pass has committed.
    final class FailingValidation: EntityMigrationPolicy {
        func performCustomValidation(_ mapping: EntityMappingContext) throws {
            throw PolicyError(message: "validation fails on purpose")
        }
    }

    final class PassingValidation: EntityMigrationPolicy {}

    /// The kitchen mapping with a policy on RecipeToRecipe: failing, then (same plan) passing.
    static func migrator(failing: Bool, on connection: PostgresConnection) throws -> StoreMigrator {
        var mapping = HeavyweightMigrationTests.kitchenMapping()
        mapping.entityMappings[1].policy = "Check"
        var migrator = HeavyweightMigrationTests.migrator(try HeavyweightMigrationTests.kitchen(), mapping, on: connection)
        migrator.policies = PolicyRegistry()
        migrator.policies.register("Check") { failing ? FailingValidation() as any EntityMigrationPolicy : PassingValidation() }
        return migrator
    }

    static func interrupted(_ body: (PostgresConnection) throws -> Void) throws {
        try S.withStore(try HeavyweightMigrationTests.kitchen(), rows: 20) { connection in
            #expect(throws: StepFailure.self) { _ = try Self.migrator(failing: true, on: connection).apply() }
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try connection.execute("SELECT count(*) AS n FROM \"shop~staging\".recipe").int(0, "n") == 20)
            try body(connection)
        }
    }

    static func snapshot(on connection: PostgresConnection) throws -> [[String?]] {
        try S.rows("chef", ["name"], on: connection) + S.rows("recipe", ["name", "amount", "chef_pk"], on: connection)
    }

    @Test func rowsInsertedUpdatedAndDeletedSinceTheInterruptionStopTheResumeNamingThem() throws {
        try Self.interrupted { connection in
            try connection.execute("INSERT INTO shop.chef (name) VALUES ('late chef')")
            try connection.execute("UPDATE shop.recipe SET name = 'renamed' WHERE _pk = (SELECT min(_pk) FROM shop.recipe)")
            try connection.execute("DELETE FROM shop.recipe WHERE _pk = (SELECT max(_pk) FROM shop.recipe)")
            try connection.execute("UPDATE shop.recipe SET name = 'none' WHERE false")
            let written = try Self.snapshot(on: connection)

            let refusal = #expect(throws: StagingMismatch.self) { _ = try Self.migrator(failing: false, on: connection).apply() }
            let message = refusal?.description ?? ""
            #expect(message.contains("it was written since: shop.chef 1 row(s) inserted; shop.recipe 1 row(s) deleted, 1 row(s) updated"), "\(message)")
            #expect(message.contains("--restart"), "\(message)")
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try Self.snapshot(on: connection) == written)

            // --restart starts over from the store as it is now: every write is in.
            _ = try Self.migrator(failing: false, on: connection).apply(options: ApplyOptions(restart: true))
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.chef WHERE name = 'late chef'").int(0, "n") == 1)
            #expect(try connection.execute("SELECT name, total_cost FROM shop.recipe ORDER BY name, total_cost").rows
                == connection.execute("SELECT name, amount FROM \"shop~\".recipe ORDER BY name, amount").rows)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe WHERE name = 'renamed'").int(0, "n") == 1)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == 19)
            // The triggers went with the swap; none is left on either schema.
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_trigger WHERE tgname LIKE '\\_orchestrator\\_%'").int(0, "n") == 0)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_proc WHERE proname = '_record_change'").int(0, "n") == 0)

            // A crash between the swap and that cleanup leaves them on the backup: the next
            // apply, with nothing to migrate, removes them.
            try connection.execute("CREATE FUNCTION \"shop~\"._record_change() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NULL; END$$")
            try connection.execute("CREATE TRIGGER _orchestrator_insert AFTER INSERT ON \"shop~\".recipe FOR EACH STATEMENT EXECUTE FUNCTION \"shop~\"._record_change()")
            #expect(try Self.migrator(failing: false, on: connection).apply().plan.isUpToDate)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_trigger WHERE tgname LIKE '\\_orchestrator\\_%'").int(0, "n") == 0)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_proc WHERE proname = '_record_change'").int(0, "n") == 0)
        }
    }

    @Test func stagingRowsDeletedByHandStopTheResumeNamingTheTable() throws {
        try Self.interrupted { connection in
            try connection.execute("DELETE FROM \"shop~staging\".recipe WHERE _pk % 2 = 0")
            let before = try Self.snapshot(on: connection)

            let refusal = #expect(throws: StagingMismatch.self) { _ = try Self.migrator(failing: false, on: connection).apply() }
            let message = refusal?.description ?? ""
            #expect(message.contains("was changed outside orchestrator: shop~staging.recipe holds 10 row(s), 20 when pass"), "\(message)")
            #expect(message.contains("--restart"), "\(message)")
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try Self.snapshot(on: connection) == before)
        }
    }

    @Test func changeTriggersDroppedByHandStopTheResume() throws {
        try Self.interrupted { connection in
            try connection.execute("DROP TRIGGER _orchestrator_update ON shop.recipe")
            let refusal = #expect(throws: StagingMismatch.self) { _ = try Self.migrator(failing: false, on: connection).apply() }
            #expect(refusal?.description.contains("the change triggers on shop.recipe were removed") == true, "\(refusal.map(String.init(describing:)) ?? "")")
            #expect(try S.version(on: connection) == "Kitchen 1")
        }
    }
}
