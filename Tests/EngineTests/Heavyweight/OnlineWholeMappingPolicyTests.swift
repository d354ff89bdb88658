import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
import ExamplePolicies
@testable import Engine

/// `apply --online` of a heavyweight step whose policy has hooks over the whole entity mapping
/// (`begin`, `endInstanceCreation`, `endRelationshipCreation`) or declares none: the entity
/// mapping runs again whole under the write guard, so that those hooks see the final data
/// once; or, for a policy that runs them per round, in every round, told the round's keys.
/// Either way the store equals an offline migration of the final data, row by row, while a
/// writer inserts, updates and deletes during the step.
@Suite(integration) struct OnlineWholeMappingPolicyTests {
    typealias S = MigratedStore
    typealias Kitchen = HeavyweightMigrationTests
    typealias Online = OnlineHeavyweightTests

    /// Whole-mapping hooks in both stages: `begin` starts a tally that `createDestinationInstances`
    /// adds each recipe kept to, `endInstanceCreation` inserts it as a summary chef, and
    /// `endRelationshipCreation` adds to it how many recipes have an author. Per instance,
    /// it drops recipes whose amount is a multiple of 7 and gives those with an even amount a
    /// sous chef.
    final class Tally: OnlineEntityMigrationPolicy {
        var declaredHooks: Set<PolicyHook>? {
            [.begin, .createDestinationInstances, .endInstanceCreation, .createRelationships, .endRelationshipCreation]
        }
        var recipes = 0
        var total: Int64 = 0

        func begin(_ mapping: EntityMappingContext) throws {
            recipes = 0
            total = 0
        }

        func createDestinationInstances(for source: SourceInstance, _ mapping: EntityMappingContext) throws {
            guard case .int(let amount) = source["amount"], amount % 7 != 0, case .string(let name) = source["name"] else { return }
            let recipe = try mapping.createDestinationInstance(for: source)
            recipe["name"] = .string(name + " tallied")
            recipes += 1
            total += amount
            if amount % 2 == 0 { try mapping.insertInstance(of: "Chef")["name"] = .string("sous chef of " + name) }
        }

        func endInstanceCreation(_ mapping: EntityMappingContext) throws {
            try mapping.insertInstance(of: "Chef")["name"] = .string("tally: \(recipes) recipes, \(total) in all")
        }

        func createRelationships(for destination: DestinationInstance, _ mapping: EntityMappingContext) throws {
            OnlinePolicyTests.Brigade.sign(destination)
        }

        func endRelationshipCreation(_ mapping: EntityMappingContext) throws {
            try mapping.query("""
                UPDATE \(ident: mapping.stagingSchema, "chef")
                SET name = name || ', ' || (SELECT count(*) FROM \(ident: mapping.stagingSchema, "recipe") WHERE author_pk IS NOT NULL) || ' signed'
                WHERE name LIKE 'tally:%'
                """)
        }
    }

    /// Declares nothing, and `begin` reads an aggregate of the old store (by default the
    /// largest amount of a recipe), which every instance's name then carries: a write to one
    /// source row changes the others.
    final class Ranked: EntityMigrationPolicy {
        let aggregate: SQL
        let table: String
        var top = ""

        init(_ aggregate: SQL = "max(amount)", of table: String = "recipe") {
            self.aggregate = aggregate
            self.table = table
        }

        func begin(_ mapping: EntityMappingContext) throws {
            top = try mapping.query("SELECT \(aggregate)::text AS top FROM \(ident: mapping.storeSchema, table)").value(0, "top") ?? "none"
        }

        func createDestinationInstances(for source: SourceInstance, _ mapping: EntityMappingContext) throws {
            let instance = try mapping.createDestinationInstance(for: source)
            guard case .string(let name) = source["name"] else { return }
            instance["name"] = .string("\(name) (top \(top))")
            if case .int(let amount) = source["amount"], amount % 3 == 0 {
                try mapping.insertInstance(of: "Chef")["name"] = .string("taster of " + name)
            }
        }
    }

    /// The source keys each catch-up round told `RoundTally`'s hooks, by round.
    final class Rounds: @unchecked Sendable {
        private let lock = NSLock()
        private var counts: [Int] = []
        func record(_ count: Int) { lock.withLock { counts.append(count) } }
        var recorded: [Int] { lock.withLock { counts } }
    }

    /// Runs its whole-mapping hook per round: the summary chef is inserted by the bulk pass and
    /// brought up to date in each round from what the new store holds.
    final class RoundTally: OnlineEntityMigrationPolicy {
        let rounds: Rounds
        init(rounds: Rounds) { self.rounds = rounds }
        var declaredHooks: Set<PolicyHook>? { [.createDestinationInstances, .endInstanceCreation] }
        var runsWholeMappingHooksPerCatchUpRound: Bool { true }

        func endInstanceCreation(_ mapping: EntityMappingContext) throws {
            let count: SQL = "(SELECT count(*) FROM \(ident: mapping.stagingSchema, "recipe"))"
            guard let round = mapping.catchUpRound else {
                let recipes = try mapping.query("SELECT \(count) AS n").int(0, "n") ?? 0
                try mapping.insertInstance(of: "Chef")["name"] = .string("tally: \(recipes) recipes")
                return
            }
            rounds.record(Int(try mapping.query("SELECT count(*) AS n FROM \(round.sourceKeys) AS k").int(0, "n") ?? 0))
            try mapping.query("UPDATE \(ident: mapping.stagingSchema, "chef") SET name = 'tally: ' || \(count) || ' recipes' WHERE name LIKE 'tally:%'")
        }
    }

    static func migrator(_ policy: String, rounds: Rounds = Rounds(), on connection: PostgresConnection) throws -> StoreMigrator {
        try OnlinePolicyTests.migrator(policy, on: connection) { policies in
            policies.register("Tally") { Tally() }
            policies.register("Ranked") { Ranked() }
            policies.register("RoundTally") { RoundTally(rounds: rounds) }
        }
    }

    /// The kitchen store with `writes` applied, migrated offline through `policy`.
    static func offlineMigration(_ policy: String, after writes: [SQL]) throws -> (source: [[String?]], migrated: [[String?]]) {
        try OnlinePolicyTests.offlineMigration(after: writes) { try migrator(policy, on: $0) }
    }

    @Test(arguments: ["Tally", "Ranked", "RoundTally"])
    func everyWriteDuringTheStepReachesTheNewStoreThroughTheWholeMapping(policy: String) throws {
        try S.withStore(try Kitchen.kitchen()) { connection in
            let rounds = Rounds()
            let migrator = try Self.migrator(policy, rounds: rounds, on: connection)
            let catchUp = try #require(try migrator.plan().steps.first?.staged?.catchUp)
            #expect(catchUp.rerunWhole == (policy == "RoundTally" ? [] : ["RecipeToRecipe"]))
            var script = try OnlineApplyScript.kitchen(on: connection)
            // Stage 3's build finds every row its foreign key needs (recipes whose chef was
            // deleted meanwhile had their links cleared), so the guard does not scan them.
            var built = false
            script.onEvent = { event in
                guard event.kind == .passFinished, event.stage == .build else { return }
                built = try connection.execute(#"SELECT to_regclass('"shop~staging"._touched_rows') IS NOT NULL AS built"#).bool(0, "built") == true
            }
            _ = try script.apply(migrator, on: connection)
            #expect(built, "stage 3's build committed before the write guard")
            #expect(try S.version(on: connection) == "Kitchen 2")
            try Online.expectNoTriggersLeft(on: connection)
            if policy == "RoundTally" {
                // The rounds told the hook their recipes' keys (none in a round that logged only chefs).
                #expect(rounds.recorded.contains { $0 > 1 } && rounds.recorded.contains(1), "source keys per round: \(rounds.recorded)")
            }
            // One summary, whatever ran before the write guard.
            if policy != "Ranked" { #expect(try connection.execute("SELECT count(*) AS n FROM shop.chef WHERE name LIKE 'tally:%'").int(0, "n") == 1) }

            let writes = Online.duringStageOne + Online.concurrent + Online.betweenRounds
            let reference = try Self.offlineMigration(policy, after: writes)
            #expect(try Online.sourceSnapshot("shop~", on: connection) == reference.source, "the reference store holds the same final data")
            TwinComparison.expectSameRows(try OnlinePolicyTests.snapshot(S.store, on: connection), reference.migrated)
        }
    }

    @Test func anOnlineRunCrashedAfterARoundContinuesOnlineOnlyAndMapsTheWholeMappingOnce() throws {
        try S.withStore(try Kitchen.kitchen()) { connection in
            // A run killed once a catch-up round has committed: the tally's rows wait for the guard.
            var options = ApplyOptions()
            options.online = true
            options.catchUpRemainder = 0
            try Online.crashOnlineRun(options: options, on: connection, { try Self.migrator("Tally", on: $0) }, onEvent: { event in
                if event.kind == .passFinished, event.entityMapping == "RecipeToRecipe", event.stage == .pass(.createInstances) {
                    for write in Online.duringStageOne { _ = try? connection.execute(write) }
                }
            }, crashesAt: { $0.stage == .catchUp && $0.kind == .rows })
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try connection.execute(#"SELECT mapped_through FROM "shop~staging"._catch_up_position"#).int(0, "mapped_through") ?? 0 > 0)

            // Without --online the rows left for the guard stop the run, nothing changed.
            let refusal = #expect(throws: StagingMismatch.self) { _ = try Self.migrator("Tally", on: connection).apply() }
            #expect(refusal?.reason == "holds catch-up rounds of an online run, which leave RecipeToRecipe to run again whole through its policy under the write guard; continue it with apply --online")
            #expect(try S.version(on: connection) == "Kitchen 1")

            try connection.execute("UPDATE shop.recipe SET amount = amount + 2 WHERE _pk IN (30, 31)")
            _ = try Self.migrator("Tally", on: connection).apply(options: options)
            #expect(try S.version(on: connection) == "Kitchen 2")
            try Online.expectNoTriggersLeft(on: connection)
            let writes = Online.duringStageOne + ["UPDATE shop.recipe SET amount = amount + 2 WHERE _pk IN (30, 31)"]
            TwinComparison.expectSameRows(try OnlinePolicyTests.snapshot(S.store, on: connection), try Self.offlineMigration("Tally", after: writes).migrated)
        }
    }

    /// Examples/people's `PersonSplitPolicy` declares no hooks and shares one Address among
    /// the people living there: run per row again, a person moving to a known address would
    /// get a second one. Run whole under the guard, addresses come out as offline.
    @Test func aPolicySharingInstancesAcrossRowsGivesTheOfflineStoreWhileTheStoreIsWritten() throws {
        let model = try PolicyMigrationTests.people()
        let mapping = MappingModel(source: "People 1", destination: "People 2", entityMappings: [
            EntityMappingDefinition(name: "PersonToPerson", type: .custom, sourceEntity: "Person", destinationEntity: "Person", policy: "PersonSplit"),
        ], file: "people.yaml")
        let people: SQL = """
            INSERT INTO shop.person (name, street, city)
            SELECT 'person ' || i, 'street ' || (i % 15), 'city ' || (i % 4) FROM generate_series(1, 240) AS i
            """
        let concurrent: [SQL] = (0..<20).flatMap { i -> [SQL] in [
            "INSERT INTO shop.person (name, street, city) VALUES ('writer \(unsafeRaw: String(i))', 'street \(unsafeRaw: String(i % 15))', 'city \(unsafeRaw: String(i % 4))')",
            "INSERT INTO shop.person (name, street, city) VALUES ('newcomer \(unsafeRaw: String(i))', 'new street \(unsafeRaw: String(i % 5))', 'city 0')",
            "UPDATE shop.person SET street = 'moved \(unsafeRaw: String(i % 3))' WHERE name = 'person \(unsafeRaw: String(160 + i))'",
            "DELETE FROM shop.person WHERE name = 'person \(unsafeRaw: String(200 + i))'",
        ] }
        let duringStageOne: [SQL] = [
            "UPDATE shop.person SET city = 'city 9' WHERE name IN ('person 1', 'person 2')",
            // Every resident of (street 14, city 2) before the writer's: that address goes.
            "DELETE FROM shop.person WHERE name IN ('person 14', 'person 74', 'person 134', 'person 194')",
        ]
        let betweenRounds: [SQL] = ["INSERT INTO shop.person (name, street, city) VALUES ('late', 'street 1', 'city 1')"]
        let snapshot = { (connection: PostgresConnection) throws -> [[String?]] in
            try connection.execute("SELECT p.name, a.street, a.city FROM shop.person p LEFT JOIN shop.address a ON a._pk = p.address_pk ORDER BY p.name").rows
                + connection.execute("SELECT street, city FROM shop.address ORDER BY street, city").rows
        }
        var reference: [[String?]] = []
        try S.withStore(model, rows: 0) { connection in
            try connection.execute(people)
            for write in duringStageOne + concurrent + betweenRounds { try connection.execute(write) }
            _ = try PolicyMigrationTests.migrator(model, mapping, ["PersonSplit": { PersonSplitPolicy() }], on: connection).apply()
            reference = try snapshot(connection)
        }
        try S.withStore(model, rows: 0) { connection in
            try connection.execute(people)
            let migrator = PolicyMigrationTests.migrator(model, mapping, ["PersonSplit": { PersonSplitPolicy() }], on: connection)
            let script = OnlineApplyScript(
                writer: try TwinWriter.script(sessionsLike: connection, concurrent), first: "PersonToPerson", duringStageOne: duringStageOne,
                last: "PersonToPerson", betweenRounds: betweenRounds
            )
            _ = try script.apply(migrator, on: connection)
            #expect(try S.version(on: connection) == "People 2")
            try Online.expectNoTriggersLeft(on: connection)
            TwinComparison.expectSameRows(try snapshot(connection), reference)
        }
    }

    /// The entity mapping run again whole is the one the others link to: recipes written
    /// meanwhile point at chefs it has not made yet until the guard, where the recipes reading
    /// its rows are mapped again with it.
    @Test func rowsLinkingToAnEntityMappingRunAgainWholeAreLinkedToItsFinalRows() throws {
        let make = { (connection: PostgresConnection) throws -> StoreMigrator in
            var mapping = Kitchen.kitchenMapping()
            mapping.entityMappings[0].policy = "Roster"
            var migrator = Kitchen.migrator(try Kitchen.kitchen(), mapping, on: connection)
            migrator.policies = PolicyRegistry()
            migrator.policies.register("Roster") { Ranked("count(*)", of: "chef") }
            return migrator
        }
        try S.withStore(try Kitchen.kitchen()) { connection in
            let migrator = try make(connection)
            #expect(try migrator.plan().steps.first?.staged?.catchUp?.rerunWhole == ["ChefToChef"])
            _ = try OnlineApplyScript.kitchen(on: connection).apply(migrator, on: connection)
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try connection.execute("""
                SELECT c.name FROM shop.recipe AS r JOIN shop.chef AS c ON c._pk = r.author_pk WHERE r.name = 'hook recipe'
                """).rows.count == 1, "the recipe written meanwhile links to the chef written with it")
            let reference = try OnlinePolicyTests.offlineMigration(after: Online.duringStageOne + Online.concurrent + Online.betweenRounds, make)
            TwinComparison.expectSameRows(try OnlinePolicyTests.snapshot(S.store, on: connection), reference.migrated)
        }
    }
}
