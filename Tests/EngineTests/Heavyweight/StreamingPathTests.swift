import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// The streaming path computes in Swift what the set-based path computes in PostgreSQL: for
/// the same mapping and rows, both give the same store.
@Suite(integration) struct StreamingPathTests {
    typealias S = MigratedStore

    /// Every row of every table of the store, as JSON text by `_pk`, and its catalog.
    static func dump(on connection: PostgresConnection) throws -> [String] {
        let tables = try connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'shop' ORDER BY 1").rows.map { $0[0]! }
        var lines: [String] = []
        for table in tables {
            let rows = try connection.execute("SELECT row_to_json(t)::text AS line FROM \(ident: "shop", table) AS t ORDER BY 1").rows
            lines += rows.map { "\(table): \($0[0] ?? "")" }
        }
        return lines + (try S.catalog(of: "shop", on: connection))
    }

    @Test func theSameMappingGivesTheSameStoreSetBasedAndStreamed() throws {
        let model = try HeavyweightMigrationTests.kitchen()
        var mapping = HeavyweightMigrationTests.kitchenMapping(filter: "amount > 50 OR amount == nil")
        // Arithmetic, a built-in and a key path through a to-one, beside Fahrenheit -> Celsius.
        mapping.entityMappings[0].attributeMappings = [PropertyMappingDefinition(name: "name", valueExpression: "uppercase:($source.name)")]
        // Chefs filtered too: recipes of the chefs left out lose their author (the link goes
        // through ChefToChef's association).
        mapping.entityMappings[0].filter = "name != nil"
        var results: [[String]] = []
        var sources: [[String]] = []
        for streaming in [false, true] {
            try S.withStore(model, rows: 400) { connection in
                sources.append(try Self.dump(on: connection))
                try connection.execute("SELECT pg_stat_force_next_flush()")  // the fill's counts before ANALYZE (below)
                try connection.execute("ANALYZE shop.recipe, shop.chef")
                var migrator = HeavyweightMigrationTests.migrator(model, mapping, on: connection)
                migrator.forceStreaming = streaming
                let step = try #require(try migrator.plan().steps.first)
                let stageOne = step.passes.filter { $0.stage == .createInstances }
                #expect(stageOne.map(\.execution) == Array(repeating: streaming ? .streaming : .setBased, count: 2))
                #expect(stageOne.map(\.rowEstimate) == [400, 400])
                var rows = 0
                // The filters leave rows out: data lost, the flag needed.
                #expect(step.hazards.filter(\.isDataLoss).compactMap(\.entity) == ["Chef", "Recipe"])
                _ = try migrator.apply(options: ApplyOptions(allowDataLoss: true, batchSize: 97), onProgress: { event in
                    if event.kind == .rows { rows = max(rows, event.rowsDone) }
                })
                // Streaming reports rows batch by batch; set-based passes report only their end.
                #expect(streaming ? rows > 0 : rows == 0)
                let lost = try connection.execute("""
                    SELECT count(*) AS n FROM "shop~".recipe r JOIN "shop~".chef c ON c._pk = r.chef_pk
                    WHERE c.name IS NULL AND (r.amount > 50 OR r.amount IS NULL)
                    """).int(0, "n") ?? 0
                #expect(lost > 0)
                #expect(try connection.execute("""
                    SELECT count(*) AS n FROM shop.recipe r JOIN "shop~".recipe o ON o._pk = r._pk
                    WHERE r.author_pk IS NULL AND o.chef_pk IS NOT NULL
                    """).int(0, "n") == lost)
                results.append(try Self.dump(on: connection))
            }
        }
        #expect(sources[0] == sources[1], "both runs start from the same rows")
        #expect(results[0].count > 600)
        #expect(results[0] == results[1])
    }

    @Test func withoutABackupTheOldStoreIsDroppedAfterTheSwap() throws {
        let model = try HeavyweightMigrationTests.kitchen()
        try S.withStore(model, rows: 40) { connection in
            var migrator = HeavyweightMigrationTests.migrator(model, HeavyweightMigrationTests.kitchenMapping(), on: connection)
            migrator.keepBackup = false
            let plan = try migrator.plan()
            #expect(plan.steps.first?.staged?.backupSchema == nil)
            let report = try migrator.apply()
            #expect(report.appliedSteps.first?.step.staged?.backupSchema == nil)
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == 40)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname LIKE 'shop~%'").int(0, "n") == 0)
        }
    }

    /// A filter's rejected rows do not reach the new store: data lost, which runs only with
    /// `allowDataLoss`, whether the backup keeps them or not (a backup is not consent).
    @Test func aFilterIsDataLossWithABackupOrWithout() throws {
        let model = try HeavyweightMigrationTests.kitchen()
        try S.withStore(model, rows: 40) { connection in
            // The fill's row counts reach the statistics first: flushed after ANALYZE (at most
            // once a second), they would be added to its count and double the estimate.
            try connection.execute("SELECT pg_stat_force_next_flush()")
            try connection.execute("ANALYZE shop.recipe, shop.chef")
            var migrator = HeavyweightMigrationTests.migrator(model, HeavyweightMigrationTests.kitchenMapping(filter: "amount > 100"), on: connection)
            #expect(try migrator.plan().steps.first?.hazards.filter(\.isDataLoss).map(\.message) == [
                "rows of Recipe (up to 40 rows) do not reach the new store: those the filter of RecipeToRecipe rejects; kept only in the backup schema shop~",
            ])
            #expect(throws: DataLossNotAllowed.self) { try migrator.apply() }
            migrator.keepBackup = false
            let step = try #require(try migrator.plan().steps.first)
            #expect(step.hazards.filter(\.isDataLoss).map(\.message) == [
                "rows of Recipe (up to 40 rows) do not reach the new store: those the filter of RecipeToRecipe rejects; dropped with the old store",
            ])
            let refusal = #expect(throws: DataLossNotAllowed.self) { try migrator.apply() }
            #expect(refusal?.description.contains("the filter of RecipeToRecipe rejects") == true)
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == 40)
            _ = try migrator.apply(options: ApplyOptions(allowDataLoss: true))
            #expect(try S.version(on: connection) == "Kitchen 2")
        }
    }

    /// Two mapping models in a row: the backup is the store as it was before the run, not the
    /// intermediate version.
    @Test func aChainOfMappingModelsKeepsTheOriginalStoreAsTheBackup() throws {
        let versions: [(name: String, yaml: String)] = [
            ("Kitchen 1", S.version("Recipe: {attributes: {name: string, amount: int32}}")),
            ("Kitchen 2", S.version("Recipe: {attributes: {name: string, cost: int32}}")),
            ("Kitchen 3", S.version("Recipe: {attributes: {name: string, totalCost: int64}}")),
        ]
        let model = try S.model(versions)
        func mapping(_ from: String, _ to: String, _ attribute: String, _ expression: String) -> ExplicitMapping {
            ExplicitMapping(MappingModel(source: from, destination: to, entityMappings: [
                EntityMappingDefinition(name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe",
                                        attributeMappings: [PropertyMappingDefinition(name: attribute, valueExpression: expression)]),
            ], file: "\(from).yaml"))
        }
        try S.withStore(model, rows: 30) { connection in
            let before = try S.rows("recipe", ["name", "amount"], on: connection)
            let migrator = StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [
                mapping("Kitchen 1", "Kitchen 2", "cost", "$source.amount + 1"),
                mapping("Kitchen 2", "Kitchen 3", "totalCost", "$source.cost * 10"),
            ])
            let report = try migrator.apply()
            #expect(report.appliedSteps.map { $0.step.staged?.backupSchema } == ["shop~", nil])
            let after = try connection.execute("SELECT name, total_cost FROM shop.recipe ORDER BY _pk").rows
            #expect(after == before.map { [$0[1], $0[2].map { String((Int($0)! + 1) * 10) }] })
            #expect(try connection.execute("SELECT name, amount FROM \"shop~\".recipe ORDER BY _pk").rows == before.map { [$0[1], $0[2]] })
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname LIKE 'shop~%'").int(0, "n") == 1)
        }
    }

    /// While the passes run, a second session holds SHARE locks on the old store's tables:
    /// reads go on, a write waits (here: gives up after its lock_timeout).
    @Test func writesToTheOldStoreWaitWhileThePassesRun() throws {
        let model = try HeavyweightMigrationTests.kitchen()
        try S.withStore(model, rows: 20) { connection in
            let other = try connection.reconnect()
            defer { other.close() }
            try other.execute("SET lock_timeout = '200ms'")
            var checked = 0
            _ = try HeavyweightMigrationTests.migrator(model, HeavyweightMigrationTests.kitchenMapping(), on: connection).apply(onProgress: { event in
                guard event.kind == .passStarted, event.stage == .pass(.createInstances) else { return }
                #expect(try! other.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == 20)
                let write = #expect(throws: PostgresError.self) { try other.execute("UPDATE shop.recipe SET amount = 1") }
                #expect(write?.sqlState == SQLState.lockNotAvailable)
                checked += 1
            })
            #expect(checked == 2)
            // After the swap the store takes writes again (the old tables are the backup's now).
            try other.execute("UPDATE shop.recipe SET total_cost = 1")
            try other.execute("UPDATE \"shop~\".recipe SET amount = 1")
        }
    }

    /// Stage 3 counts to-many relationships against the destination's min and max: a chef
    /// must have one to three recipes.
    @Test func stageThreeChecksToManyCounts() throws {
        let model = try S.model([
            ("Kitchen 1", S.version("""
                Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true}}}
                Recipe: {attributes: {name: string}, relationships: {chef: {destination: Chef, inverse: recipes}}}
                """)),
            ("Kitchen 2", S.version("""
                Chef: {attributes: {name: string, rank: int16}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true, minCount: 1, maxCount: 3}}}
                Recipe: {attributes: {name: string}, relationships: {chef: {destination: Chef, inverse: recipes}}}
                """)),
        ])
        let mapping = MappingModel(source: "Kitchen 1", destination: "Kitchen 2", entityMappings: [
            EntityMappingDefinition(name: "ChefToChef", type: .transform, sourceEntity: "Chef", destinationEntity: "Chef",
                                    attributeMappings: [PropertyMappingDefinition(name: "rank", valueExpression: "1")]),
            EntityMappingDefinition(name: "RecipeToRecipe", type: .copy, sourceEntity: "Recipe", destinationEntity: "Recipe"),
        ], file: "kitchen.yaml")
        try S.withStore(model, rows: 0) { connection in
            try connection.execute("INSERT INTO shop.chef (name) VALUES ('none'), ('two'), ('five')")
            try connection.execute("""
                INSERT INTO shop.recipe (name, chef_pk)
                SELECT 'r' || i, (SELECT _pk FROM shop.chef WHERE name = CASE WHEN i <= 2 THEN 'two' ELSE 'five' END) FROM generate_series(1, 7) AS i
                """)
            let migrator = StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(mapping)])
            let failure = #expect(throws: StepFailure.self) { try migrator.apply() }
            #expect(failure?.description.contains("2 rows of Chef whose recipes does not hold 1 to 3 objects; first _pk: ") == true, "\(failure.map(String.init(describing:)) ?? "")")
            #expect(try S.version(on: connection) == "Kitchen 1")

            // Within the bounds, it passes (the data changed: start over).
            try connection.execute("UPDATE shop.recipe SET chef_pk = (SELECT _pk FROM shop.chef WHERE name = 'none') WHERE name IN ('r6', 'r7')")
            _ = try migrator.apply(options: ApplyOptions(restart: true))
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.chef c WHERE (SELECT count(*) FROM shop.recipe r WHERE r.chef_pk = c._pk) BETWEEN 1 AND 3").int(0, "n") == 3)
        }
    }
}
