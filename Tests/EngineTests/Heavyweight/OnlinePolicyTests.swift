import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// `apply --online` of a heavyweight step whose entity mapping runs a custom policy with
/// per-instance hooks: the rows written meanwhile go through the policy again, the instances
/// it inserted for them are replaced, and the store equals an offline migration of the final
/// data, row by row. A policy with a hook over the whole entity mapping runs again whole under
/// the write guard (`OnlineWholeMappingPolicyTests`).
@Suite(integration) struct OnlinePolicyTests {
    typealias S = MigratedStore
    typealias Kitchen = HeavyweightMigrationTests
    typealias Online = OnlineHeavyweightTests

    /// Per instance: drops recipes whose amount is a multiple of 7, renames the others, gives
    /// those with an even amount a sous chef of their own (a Chef, whose table keeps its source
    /// keys), and in stage 2 marks each recipe signed or anonymous by its author link.
    final class Brigade: OnlineEntityMigrationPolicy {
        var declaredHooks: Set<PolicyHook>? { [.createDestinationInstances, .createRelationships] }

        func createDestinationInstances(for source: SourceInstance, _ mapping: EntityMappingContext) throws {
            guard case .int(let amount) = source["amount"], amount % 7 != 0 else { return }
            guard case .string(let name) = source["name"] else { return }
            let recipe = try mapping.createDestinationInstance(for: source)
            recipe["name"] = .string(name + " by the brigade")
            if amount % 2 == 0 {
                let sous = try mapping.insertInstance(of: "Chef")
                sous["name"] = .string("sous chef of " + name)
            }
        }

        func createRelationships(for destination: DestinationInstance, _ mapping: EntityMappingContext) throws {
            Self.sign(destination)
        }

        static func sign(_ recipe: DestinationInstance) {
            guard case .string(let name) = recipe["name"] else { return }
            recipe["name"] = .string(name + (recipe.relationship("author") == nil ? ", anonymous" : ", signed"))
        }
    }

    /// Counts the recipes at the end of stage 1: a hook over the whole entity mapping.
    final class Tally: OnlineEntityMigrationPolicy {
        var declaredHooks: Set<PolicyHook>? { [.createDestinationInstances, .endInstanceCreation] }
        func endInstanceCreation(_ mapping: EntityMappingContext) throws {}
    }

    /// The kitchen mapping with `policy` on RecipeToRecipe; `register` adds policies.
    static func migrator(_ policy: String, on connection: PostgresConnection, register: (PolicyRegistry) -> Void = { _ in }) throws -> StoreMigrator {
        var mapping = Kitchen.kitchenMapping()
        mapping.entityMappings[1].policy = policy
        var migrator = Kitchen.migrator(try Kitchen.kitchen(), mapping, on: connection)
        migrator.policies = PolicyRegistry()
        migrator.policies.register("Brigade") { Brigade() }
        migrator.policies.register("Tally") { Tally() }
        register(migrator.policies)
        return migrator
    }

    /// The migrated rows by content (the policy's rows take new keys, in the order they come):
    /// chefs by name, recipes with their author's name.
    static func snapshot(_ schema: String, on connection: PostgresConnection) throws -> [[String?]] {
        try connection.execute("SELECT name FROM \(ident: schema, "chef") ORDER BY name").rows
            + connection.execute("""
                SELECT r.name, r.total_cost::text, r.temperature_c::text, c.name AS author
                FROM \(ident: schema, "recipe") AS r LEFT JOIN \(ident: schema, "chef") AS c ON c._pk = r.author_pk
                ORDER BY 1, 2, 3, 4
                """).rows
    }

    /// The kitchen store with `writes` applied, migrated offline by the migrator `make` gives.
    static func offlineMigration(
        after writes: [SQL], _ make: (PostgresConnection) throws -> StoreMigrator = { try migrator("Brigade", on: $0) }
    ) throws -> (source: [[String?]], migrated: [[String?]]) {
        var result: ([[String?]], [[String?]]) = ([], [])
        try S.withStore(try Kitchen.kitchen()) { connection in
            for write in writes { try connection.execute(write) }
            let source = try Online.sourceSnapshot(S.store, on: connection)
            _ = try make(connection).apply()
            result = (source, try snapshot(S.store, on: connection))
        }
        return result
    }

    @Test func rowsWrittenDuringTheStepGoThroughThePolicyAgain() throws {
        try S.withStore(try Kitchen.kitchen()) { connection in
            let migrator = try Self.migrator("Brigade", on: connection)
            _ = try OnlineApplyScript.kitchen(on: connection).apply(migrator, on: connection)
            #expect(try S.version(on: connection) == "Kitchen 2")

            // The recipe inserted meanwhile went through the policy: renamed, signed, no sous chef (amount 5).
            #expect(try connection.execute("""
                SELECT r.name, c.name AS author FROM shop.recipe AS r JOIN shop.chef AS c ON c._pk = r.author_pk WHERE r.name LIKE 'hook recipe%'
                """).rows == [["hook recipe by the brigade, signed", "hook chef"]])
            // A recipe whose amount changed parity lost or gained its sous chef: one per final
            // recipe kept with an even amount, none left from the rows as the bulk pass saw them.
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.chef WHERE name LIKE 'sous chef of %'").int(0, "n") == connection.execute("""
                SELECT count(*) AS n FROM "shop~".recipe WHERE amount % 2 = 0 AND amount % 7 <> 0 AND name IS NOT NULL
                """).int(0, "n"))
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == connection.execute("""
                SELECT count(*) AS n FROM "shop~".recipe WHERE amount % 7 <> 0 AND name IS NOT NULL
                """).int(0, "n"), "the recipes the policy drops are not there")
            // New chefs after the swap take keys after the policy's and the application's.
            try connection.execute("INSERT INTO shop.chef (_entity, name) VALUES ('Chef', 'after the swap')")
            #expect(try connection.execute("""
                SELECT (SELECT _pk FROM shop.chef WHERE name = 'after the swap') > (SELECT max(_pk) FROM shop.chef WHERE name <> 'after the swap') AS later
                """).bool(0, "later") == true)
            try connection.execute("DELETE FROM shop.chef WHERE name = 'after the swap'")
            try Online.expectNoTriggersLeft(on: connection)

            let reference = try Self.offlineMigration(after: Online.duringStageOne + Online.concurrent + Online.betweenRounds)
            #expect(try Online.sourceSnapshot("shop~", on: connection) == reference.source, "the reference store holds the same final data")
            let online = try Self.snapshot(S.store, on: connection)
            TwinComparison.expectSameRows(online, reference.migrated)
        }
    }

    @Test func anOnlineRunCrashedAfterThePolicyRanContinuesWithoutOnlineTakingNoKeyTwice() throws {
        try S.withStore(try Kitchen.kitchen()) { connection in
            try Online.crashOnlineRun(after: "RecipeToRecipe", on: connection) { try Self.migrator("Brigade", on: $0) }
            // The sous chefs took keys from shop.chef's sequence; the staging sequence is past them.
            let sequence = try connection.execute(#"SELECT pg_get_serial_sequence('"shop~staging"."chef"', '_pk') AS s"#).value(0, "s") ?? ""
            let last = try connection.execute("SELECT last_value FROM \(unsafeRaw: sequence)").int(0, "last_value") ?? 0
            let sous = try connection.execute(#"SELECT max(_pk) AS k FROM "shop~staging".chef WHERE name LIKE 'sous chef of %'"#).int(0, "k") ?? 0
            #expect(sous > 0 && last >= sous, "staging sequence at \(last), sous chefs up to \(sous)")

            _ = try Self.migrator("Brigade", on: connection).apply()
            #expect(try S.version(on: connection) == "Kitchen 2")
            try Online.expectNoTriggersLeft(on: connection)
            #expect(try Self.snapshot(S.store, on: connection) == Self.offlineMigration(after: []).migrated)
        }
    }

    @Test func aPolicyWithAHookOverTheWholeEntityMappingRunsOnlineAgainWholeUnderTheWriteGuard() throws {
        try S.withStore(try Kitchen.kitchen(), rows: 20) { connection in
            let migrator = try Self.migrator("Tally", on: connection)
            #expect(try migrator.plan().steps.first?.staged?.catchUp?.rerunWhole == ["RecipeToRecipe"])
            var options = ApplyOptions()
            options.online = true
            _ = try migrator.apply(options: options)
            #expect(try S.version(on: connection) == "Kitchen 2")
            try Online.expectNoTriggersLeft(on: connection)
        }
    }
}
