import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// Stores several versions behind: one inferred step when it keeps everything, else a chain.
@Suite(integration) struct ChainMigrationTests {
    @Test func aStoreAtRecipes1WithRowsReachesRecipes3KeepingEveryValue() throws {
        let model = try ModelLoader.loadValidated(path: StoreCreationTests.repository + "/migrations")
        try TestDatabase.withFreshConnection { connection in
            let store = MigratedStore.store
            try SampleDataTests.createAndFill(model, version: "Recipes 1", store: store, rows: 300, on: connection)
            let before = try MigratedStore.rows("recipe", ["name", "instructions", "rating", "chef_pk"], on: connection)
            let ingredients = try MigratedStore.rows("ingredient", ["name", "amount", "recipe_pk"], on: connection)
            #expect(before.count == 300)
            #expect(before.contains { $0[3] == nil }, "some ratings are NULL before")

            let report = try StoreMigrator(connection: connection, model: model, store: store).apply()
            #expect(report.appliedSteps.map(\.step.kind) == [.lightweight])
            #expect(try MigratedStore.history(on: connection) == ["create - -> Recipes 1 succeeded", "lightweight Recipes 1 -> Recipes 3 succeeded"])

            let after = try MigratedStore.rows("recipe", ["name", "directions", "rating", "chef_pk", "cuisine_pk"], on: connection)
            #expect(after.map { Array($0.prefix(3)) } == before.map { Array($0.prefix(3)) }, "names and directions (the instructions) kept")
            #expect(after.map { $0[3] } == before.map { $0[3] ?? "0" }, "ratings kept, NULLs backfilled with 0")
            #expect(after.map { $0[4] } == before.map { $0[4] }, "chefs kept")
            #expect(after.allSatisfy { $0[5] == nil }, "no cuisine yet")
            #expect(try MigratedStore.rows("ingredient", ["name", "amount", "recipe_pk"], on: connection) == ingredients)
            try MigratedStore.expectFollowsContract(model, on: connection)
        }
    }

    @Test func aPropertyRenamedTwiceReachesTheLastVersionWithItsValues() throws {
        let model = try MigratedStore.model([
            ("v1", MigratedStore.version("Recipe: {attributes: {name: string, a: string}}")),
            ("v2", MigratedStore.version("Recipe: {attributes: {name: string, b: {type: string, renamingIdentifier: a}}}")),
            ("v3", MigratedStore.version("Recipe: {attributes: {name: string, c: {type: string, renamingIdentifier: b}}}")),
        ])
        try MigratedStore.withStore(model) { connection in
            let before = try MigratedStore.rows("recipe", ["name", "a"], on: connection)
            #expect(before.contains { $0[2] != nil })
            let report = try MigratedStore.migrate(model, on: connection)
            #expect(report.appliedSteps.map { "\($0.step.from!) -> \($0.step.to)" } == ["v1 -> v2", "v2 -> v3"])
            #expect(try MigratedStore.rows("recipe", ["name", "c"], on: connection) == before)
            #expect(try MigratedStore.history(on: connection) == [
                "create - -> v1 succeeded", "lightweight v1 -> v2 succeeded", "lightweight v2 -> v3 succeeded",
            ])
            try MigratedStore.expectFollowsContract(model, on: connection)
        }
    }
}
