import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// `apply --online` of a heavyweight step with an ordered to-many kept in the linked rows'
/// column (`Chef.recipes`, ordered, in recipe's `chef_pk` and its order column): recipes moved
/// between chefs, reordered and deleted while the step runs end with the positions an offline
/// migration of the final data gives them.
@Suite(integration) struct OnlineOrderedLinkTests {
    typealias S = MigratedStore
    typealias Online = OnlineHeavyweightTests

    static let chefs = "Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true, ordered: true}}}"

    static func model() throws -> VersionedModel {
        try S.model([
            ("v1", S.version(chefs + "\nRecipe: {attributes: {name: string}, relationships: {chef: {destination: Chef, inverse: recipes}}}")),
            ("v2", S.version(chefs + "\nRecipe: {attributes: {name: string, note: string}, relationships: {chef: {destination: Chef, inverse: recipes}}}")),
        ])
    }

    static let mapping = MappingModel(source: "v1", destination: "v2", entityMappings: [
        EntityMappingDefinition(name: "ChefToChef", type: .copy, sourceEntity: "Chef", destinationEntity: "Chef"),
        EntityMappingDefinition(
            name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe",
            attributeMappings: [PropertyMappingDefinition(name: "note", valueExpression: "$source.name")]
        ),
    ], file: "ordered.yaml")

    /// The column of each recipe's position among its chef's recipes.
    static let order: String = {
        guard let version = try? model().versions[0], let column = PropertyColumns(version: version).orderColumn(ofToOne: "chef", declaredBy: "Recipe") else {
            preconditionFailure("Recipe.chef keeps the order of Chef.recipes")
        }
        return column
    }()

    static func move(_ recipe: Int, to chef: Int, at position: Int) -> SQL {
        "UPDATE shop.recipe SET chef_pk = \(unsafeRaw: String(chef)), \(ident: order) = \(unsafeRaw: String(position)) WHERE _pk = \(unsafeRaw: String(recipe))"
    }

    static let duringStageOne: [SQL] = [move(3, to: 7, at: 0), "DELETE FROM shop.recipe WHERE _pk = 8", "DELETE FROM shop.chef WHERE _pk = 9"]
    static let concurrent: [SQL] = (0..<20).flatMap { i -> [SQL] in
        [
            "INSERT INTO shop.recipe (_pk, _entity, name, chef_pk, \(ident: order)) VALUES (\(unsafeRaw: String(200_000 + i)), 'Recipe', 'writer', \(unsafeRaw: String(100 + i % 5)), \(unsafeRaw: String(i % 3)))",
            move(150 + i, to: 120 + i % 4, at: i % 2),
            "DELETE FROM shop.recipe WHERE _pk = \(unsafeRaw: String(200 + i))",
        ]
    }
    static let betweenRounds: [SQL] = [move(40, to: 100, at: 0)]

    static func snapshot(_ schema: String, on connection: PostgresConnection) throws -> [[String?]] {
        try connection.execute("SELECT _pk, name FROM \(ident: schema, "chef") ORDER BY _pk").rows
            + connection.execute("SELECT _pk, name, chef_pk, \(ident: order)::text FROM \(ident: schema, "recipe") ORDER BY _pk").rows
    }

    @Test func recipesMovedAndReorderedMeanwhileTakeTheirOfflinePositions() throws {
        let model = try Self.model()
        var reference: [[String?]] = []
        try S.withStore(model) { connection in
            for write in Self.duringStageOne + Self.concurrent + Self.betweenRounds { try connection.execute(write) }
            _ = try StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(Self.mapping)]).apply()
            reference = try Self.snapshot(S.store, on: connection)
        }
        try S.withStore(model) { connection in
            let migrator = StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(Self.mapping)])
            let script = OnlineApplyScript(
                writer: try TwinWriter.script(sessionsLike: connection, Self.concurrent), first: "ChefToChef", duringStageOne: Self.duringStageOne,
                last: "RecipeToRecipe", betweenRounds: Self.betweenRounds
            )
            _ = try script.apply(migrator, on: connection)
            #expect(try S.version(on: connection) == "v2")
            let online = try Self.snapshot(S.store, on: connection)
            TwinComparison.expectSameRows(online, reference)
        }
    }

    /// Chef.recipes, unordered, made ordered under a new name (Chef.dishes): no entity mapping
    /// maps it, so stage 2 numbers each chef's recipes by key from Recipe's side (statistics
    /// first, the positions sorted by key again), and every catch-up round numbers them again;
    /// recipes added, moved between chefs and deleted meanwhile end with the positions an
    /// offline migration of the final data gives them.
    @Test func aToManyMadeOrderedUnderANewNameIsNumberedByKeyAsOfflineWhileWritten() throws {
        let recipe = { (inverse: String) in "\nRecipe: {attributes: {name: string}, relationships: {chef: {destination: Chef, inverse: \(inverse)}}}" }
        let model = try S.model([
            ("v1", S.version("Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true}}}" + recipe("recipes"))),
            ("v2", S.version("Chef: {attributes: {name: string}, relationships: {dishes: {destination: Recipe, inverse: chef, toMany: true, ordered: true}}}" + recipe("dishes"))),
        ])
        let mapping = MappingModel(source: "v1", destination: "v2", entityMappings: [
            EntityMappingDefinition(name: "ChefToChef", type: .copy, sourceEntity: "Chef", destinationEntity: "Chef"),
            EntityMappingDefinition(name: "RecipeToRecipe", type: .copy, sourceEntity: "Recipe", destinationEntity: "Recipe"),
        ], file: "by-key.yaml")
        let order = try #require(PropertyColumns(version: model.versions[1]).orderColumn(ofToOne: "chef", declaredBy: "Recipe"))
        let move = { (recipe: Int, chef: Int) -> SQL in "UPDATE shop.recipe SET chef_pk = \(unsafeRaw: String(chef)) WHERE _pk = \(unsafeRaw: String(recipe))" }
        // Recipes added, moved in among the keys of chefs 1 to 5 (ten recipes each) and deleted.
        let duringStageOne: [SQL] = [move(3, 2), "DELETE FROM shop.recipe WHERE _pk = 8"]
        let concurrent: [SQL] = (0..<20).flatMap { i -> [SQL] in
            [
                "INSERT INTO shop.recipe (_pk, _entity, name, chef_pk) VALUES (\(unsafeRaw: String(200_000 + i)), 'Recipe', 'writer', \(unsafeRaw: String(1 + i % 5)))",
                move(150 + i, 1 + i % 4),
                "DELETE FROM shop.recipe WHERE _pk = \(unsafeRaw: String(200 + i))",
            ]
        }
        let betweenRounds = [move(40, 1), move(61, 5)]
        let snapshot = { (connection: PostgresConnection) in
            try connection.execute("SELECT _pk, name, chef_pk, \(ident: order)::text FROM shop.recipe ORDER BY _pk").rows
        }
        var reference: [[String?]] = []
        try S.withStore(model) { connection in
            try ToManyMappingTests.concentrate("recipe", "chef_pk", onto: "chef", owners: 30, on: connection)
            for write in duringStageOne + concurrent + betweenRounds { try connection.execute(write) }
            _ = try StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(mapping)]).apply()
            reference = try snapshot(connection)
        }
        #expect(reference.contains { $0[3] == "12" }, "a chef's recipes numbered past those it had")
        try S.withStore(model) { connection in
            try ToManyMappingTests.concentrate("recipe", "chef_pk", onto: "chef", owners: 30, on: connection)
            let migrator = StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(mapping)])
            let script = OnlineApplyScript(
                writer: try TwinWriter.script(sessionsLike: connection, concurrent), first: "ChefToChef", duringStageOne: duringStageOne,
                last: "RecipeToRecipe", betweenRounds: betweenRounds
            )
            _ = try script.apply(migrator, on: connection)
            #expect(try S.version(on: connection) == "v2")
            let online = try snapshot(connection)
            TwinComparison.expectSameRows(online, reference)
        }
    }
}
