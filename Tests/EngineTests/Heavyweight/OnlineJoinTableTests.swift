import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// `apply --online` of a heavyweight step whose stores keep a many-to-many in a join table:
/// an application links and unlinks recipes and tags through the passes; every link it
/// committed is in the new store, none it removed, and the store equals an offline migration
/// of the final data, row by row (the positions of an ordered relationship too).
@Suite(integration) struct OnlineJoinTableTests {
    typealias S = MigratedStore

    static func model(ordered: Bool) throws -> VersionedModel {
        let tags = "tags: {destination: Tag, inverse: recipes, toMany: true\(ordered ? ", ordered: true" : "")}"
        return try S.model([
            ("v1", S.version("""
                Recipe: {attributes: {name: string}, relationships: {\(tags)}}
                Tag: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
                """)),
            ("v2", S.version("""
                Recipe: {attributes: {name: string}, relationships: {\(tags)}}
                Tag: {attributes: {name: string, label: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
                """)),
        ])
    }

    /// Both sides mapped (Xcode's defaults), the tags transformed.
    static let mapping = MappingModel(source: "v1", destination: "v2", entityMappings: [
        EntityMappingDefinition(name: "RecipeToRecipe", type: .copy, sourceEntity: "Recipe", destinationEntity: "Recipe"),
        EntityMappingDefinition(
            name: "TagToTag", type: .transform, sourceEntity: "Tag", destinationEntity: "Tag",
            attributeMappings: [PropertyMappingDefinition(name: "label", valueExpression: "$source.name")]
        ),
    ], file: "tags.yaml")

    static func migrator(_ model: VersionedModel, on connection: PostgresConnection) -> StoreMigrator {
        StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(mapping)])
    }

    /// A link; in the ordered store, at `position` among the recipe's tags.
    static func link(_ recipe: Int, _ tag: Int, ordered: Bool, position: Int = 7) -> SQL {
        ordered
            ? "INSERT INTO shop.recipe__tags (recipe_pk, tags_pk, tags_order) VALUES (\(unsafeRaw: String(recipe)), \(unsafeRaw: String(tag)), \(unsafeRaw: String(position)))"
            : "INSERT INTO shop.recipe__tags (recipe_pk, tags_pk) VALUES (\(unsafeRaw: String(recipe)), \(unsafeRaw: String(tag)))"
    }

    /// Once the recipes are copied (their pass done), before the tags are: links of both
    /// removed and added, a tag deleted (its links go by cascade), renamed, inserted.
    static func duringStageOne(ordered: Bool) -> [SQL] {
        [
            "DELETE FROM shop.recipe__tags WHERE recipe_pk = 2",
            link(2, 250, ordered: ordered, position: 1), link(2, 120, ordered: ordered, position: 0),
            "DELETE FROM shop.tag WHERE _pk = 5",
            "UPDATE shop.tag SET name = name || ' renamed' WHERE _pk = 6",
            "INSERT INTO shop.tag (_pk, _entity, name) VALUES (100001, 'Tag', 'hook tag')",
            link(10, 100001, ordered: ordered, position: 0),
        ]
    }

    /// The concurrent writer: new recipes and tags linked to each other and to old rows,
    /// old links removed, positions changed, recipes and tags deleted.
    static func concurrent(ordered: Bool) -> [SQL] {
        (0..<20).flatMap { i -> [SQL] in
            let key = 200_000 + i
            var writes: [SQL] = [
                "INSERT INTO shop.recipe (_pk, _entity, name) VALUES (\(unsafeRaw: String(key)), 'Recipe', 'writer recipe \(unsafeRaw: String(i))')",
                "INSERT INTO shop.tag (_pk, _entity, name) VALUES (\(unsafeRaw: String(key)), 'Tag', 'writer tag \(unsafeRaw: String(i))')",
                link(key, key, ordered: ordered, position: 1), link(key, 30 + i, ordered: ordered, position: 0),
                link(150 + i, key, ordered: ordered, position: i % 3),
                "DELETE FROM shop.recipe__tags WHERE recipe_pk = \(unsafeRaw: String(100 + i)) AND tags_pk = (SELECT min(tags_pk) FROM shop.recipe__tags WHERE recipe_pk = \(unsafeRaw: String(100 + i)))",
            ]
            if ordered { writes.append("UPDATE shop.recipe__tags SET tags_order = 9 - tags_order WHERE recipe_pk = \(unsafeRaw: String(180 + i))") }
            if i % 4 == 0 {
                writes.append("DELETE FROM shop.recipe WHERE _pk = \(unsafeRaw: String(260 + i))")
                writes.append("DELETE FROM shop.tag WHERE _pk = \(unsafeRaw: String(270 + i))")
            }
            if i % 5 == 4 { writes.append("DELETE FROM shop.tag WHERE _pk = \(unsafeRaw: String(key - 2))") }
            return writes
        }
    }

    /// Between the catch-up rounds: left for the last round, under the write guard.
    static let betweenRounds: [SQL] = ["DELETE FROM shop.recipe__tags WHERE tags_pk = 20", "UPDATE shop.recipe SET name = 'last round' WHERE _pk = 21"]

    /// Every row of the new store: recipes, tags and links (with their positions), by key.
    static func snapshot(_ schema: String, ordered: Bool, on connection: PostgresConnection) throws -> [[String?]] {
        let position: SQL = ordered ? "tags_order::text" : "NULL"
        return try connection.execute("SELECT _pk, name FROM \(ident: schema, "recipe") ORDER BY _pk").rows
            + connection.execute("SELECT _pk, name, label FROM \(ident: schema, "tag") ORDER BY _pk").rows
            + connection.execute("SELECT recipe_pk, tags_pk, \(position) FROM \(ident: schema, "recipe__tags") ORDER BY recipe_pk, tags_pk").rows
    }

    static func sourceSnapshot(_ schema: String, ordered: Bool, on connection: PostgresConnection) throws -> [[String?]] {
        let position: SQL = ordered ? "tags_order::text" : "NULL"
        return try connection.execute("SELECT _pk, name FROM \(ident: schema, "recipe") ORDER BY _pk").rows
            + connection.execute("SELECT _pk, name FROM \(ident: schema, "tag") ORDER BY _pk").rows
            + connection.execute("SELECT recipe_pk, tags_pk, \(position) FROM \(ident: schema, "recipe__tags") ORDER BY recipe_pk, tags_pk").rows
    }

    /// The store with `writes` applied, migrated offline: the reference.
    static func offlineMigration(ordered: Bool, after writes: [SQL]) throws -> (source: [[String?]], migrated: [[String?]]) {
        let model = try model(ordered: ordered)
        var result: ([[String?]], [[String?]]) = ([], [])
        try S.withStore(model) { connection in
            for write in writes { try connection.execute(write) }
            let source = try sourceSnapshot(S.store, ordered: ordered, on: connection)
            _ = try migrator(model, on: connection).apply()
            result = (source, try snapshot(S.store, ordered: ordered, on: connection))
        }
        return result
    }

    @Test(arguments: [(false, false), (true, false), (false, true)])
    func everyLinkWrittenDuringTheStepReachesTheNewStore(ordered: Bool, streaming: Bool) throws {
        let model = try Self.model(ordered: ordered)
        try S.withStore(model) { connection in
            var migrator = Self.migrator(model, on: connection)
            migrator.forceStreaming = streaming
            #expect(try migrator.plan().steps.first?.staged?.refusal == nil, "a join table no longer refuses the step online")
            let script = OnlineApplyScript(
                writer: try TwinWriter.script(sessionsLike: connection, Self.concurrent(ordered: ordered)), first: "RecipeToRecipe", duringStageOne: Self.duringStageOne(ordered: ordered),
                last: "TagToTag", betweenRounds: Self.betweenRounds
            )
            _ = try script.apply(migrator, on: connection)
            #expect(try S.version(on: connection) == "v2")

            // The links written meanwhile are there, those removed are not.
            #expect(try connection.execute("SELECT tags_pk FROM shop.recipe__tags WHERE recipe_pk = 2 ORDER BY tags_pk").rows == [["120"], ["250"]])
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe__tags WHERE tags_pk IN (5, 20)").int(0, "n") == 0)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe__tags WHERE recipe_pk = 10 AND tags_pk = 100001").int(0, "n") == 1)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe__tags WHERE tags_pk >= 200000").int(0, "n") ?? 0 >= 30)
            #expect(try connection.execute("SELECT label FROM shop.tag WHERE _pk = 6").value(0, "label")?.hasSuffix(" renamed") == true)
            try OnlineHeavyweightTests.expectNoTriggersLeft(on: connection)

            let writes = Self.duringStageOne(ordered: ordered) + Self.concurrent(ordered: ordered) + Self.betweenRounds
            let reference = try Self.offlineMigration(ordered: ordered, after: writes)
            #expect(try Self.sourceSnapshot("shop~", ordered: ordered, on: connection) == reference.source, "the reference store holds the same final data")
            let online = try Self.snapshot(S.store, ordered: ordered, on: connection)
            TwinComparison.expectSameRows(online, reference.migrated)
        }
    }
}
