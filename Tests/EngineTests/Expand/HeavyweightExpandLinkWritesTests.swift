import Foundation
import Testing
import Mapping
import ObjectModel
import PostgresClient
import Planning
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 25, point 3: a many-to-many relationship renamed by a heavyweight step (Recipe.tags in
/// v1, Recipe.labels in v2), its join table written through the new version's view when a
/// reverse mapping model is given: each pair lands in the old version's join table, the next
/// round carries it into staging, and `complete` keeps every pair both releases wrote.
@Suite(integration) struct HeavyweightExpandLinkWritesTests {
    typealias S = MigratedStore
    static let views = "shop@v2"

    static func model() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("""
                Recipe: {attributes: {name: string}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true}}}
                Tag: {attributes: {label: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
                """)),
            ("v2", S.version("""
                Recipe: {attributes: {title: string}, relationships: {labels: {destination: Tag, inverse: recipes, toMany: true}}}
                Tag: {attributes: {label: string}, relationships: {recipes: {destination: Recipe, inverse: labels, toMany: true}}}
                """)),
        ])
    }

    static func mapping(from source: String, to destination: String, name: String, names: String, tags: String, labels: String) -> MappingModel {
        MappingModel(source: source, destination: destination, entityMappings: [
            EntityMappingDefinition(
                name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe",
                attributeMappings: [PropertyMappingDefinition(name: name, valueExpression: "$source.\(names)")],
                relationshipMappings: [
                    PropertyMappingDefinition(name: labels, valueExpression: #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "TagToTag", $source.\#(tags))"#),
                ]
            ),
            EntityMappingDefinition(name: "TagToTag", type: .copy, sourceEntity: "Tag", destinationEntity: "Tag"),
        ], file: "\(source)-to-\(destination).yaml")
    }

    static func migrator(_ model: VersionedModel, on connection: PostgresConnection) -> StoreMigrator {
        StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [
            ExplicitMapping(mapping(from: "v1", to: "v2", name: "title", names: "name", tags: "tags", labels: "labels")),
            ExplicitMapping(mapping(from: "v2", to: "v1", name: "name", names: "title", tags: "labels", labels: "tags")),
        ])
    }

    /// The join table of `relationship` in `version`, with its (recipe, tag) columns.
    static func joinTable(_ model: VersionedModel, _ version: String) throws -> (name: String, recipe: String, tag: String) {
        let layout = StoreLayout(version: try #require(model.version(named: version)), schema: S.store)
        let table = try #require(layout.tables.first { !$0.kind.isHierarchy })
        guard case .join(let entity, _) = table.kind else { throw CancellationError() }
        let owner = try #require(table.columns.first { $0.role == .joinOwner }), target = try #require(table.columns.first { $0.role == .joinTarget })
        let (recipe, other) = entity == "Recipe" ? (owner, target) : (target, owner)
        return (table.name, recipe.name, other.name)
    }

    static func pairs(_ schema: String, _ table: (name: String, recipe: String, tag: String), on connection: PostgresConnection) throws -> [[String?]] {
        try connection.execute("SELECT \(ident: table.recipe), \(ident: table.tag) FROM \(ident: schema, table.name) ORDER BY 1, 2").rows
    }

    @Test func pairsWrittenThroughTheNewVersionsJoinTableLandInTheOldOneAndCompleteKeepsThem() throws {
        let model = try Self.model()
        let old = try Self.joinTable(model, "v1"), new = try Self.joinTable(model, "v2")
        try S.withStore(model, rows: 20) { connection in
            var options = ApplyOptions(lockTimeoutMilliseconds: 2000, batchSize: 7, online: true)
            options.expand = true
            let run = try BackgroundApply(Self.migrator(model, on: connection), options: options, from: connection)
            defer { run.end(on: connection) }
            #expect(run.waitForEvent { $0.kind == .paused && $0.reason?.hasPrefix("switch-over postponed") == true }, "\(run.events.suffix(3))")
            let written = try connection.execute("""
                SELECT c.relname FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = \(Self.views) AND g.tgname = 'write' ORDER BY 1
                """).rows.map { $0[0] ?? "" }
            #expect(written == [new.name, "recipe", "tag"].sorted(), "\(written)")

            let newRelease = try connection.reconnect()
            defer { newRelease.close() }
            try newRelease.execute("SET search_path = \(ident: Self.views), \(ident: S.store)")
            let recipe = try #require(try newRelease.execute("INSERT INTO recipe (title) VALUES ('new release recipe') RETURNING _pk").int(0, "_pk"))
            let gone = try #require(try Self.pairs(S.store, old, on: connection).first)
            try newRelease.execute("INSERT INTO \(ident: new.name) (\(ident: new.recipe), \(ident: new.tag)) VALUES (\(recipe), 1), (\(recipe), 2)")
            try newRelease.execute("DELETE FROM \(ident: new.name) WHERE \(ident: new.recipe) = \(literal: gone[0] ?? "") AND \(ident: new.tag) = \(literal: gone[1] ?? "")")
            // The old release reads the pairs at once in its join table, the new one after a round.
            let expected = try Self.pairs(S.store, old, on: connection)
            #expect(expected.contains([String(recipe), "1"]) && expected.contains([String(recipe), "2"]) && !expected.contains(gone), "\(expected)")
            let deadline = Date().addingTimeInterval(30)
            while try Self.pairs(Self.views, new, on: connection) != expected, Date() < deadline { Thread.sleep(forTimeInterval: 0.2) }
            #expect(try Self.pairs(Self.views, new, on: connection) == expected)
            try newRelease.execute("RESET search_path")

            _ = try ExpansionCompletion(connection: connection, store: S.store).complete(force: false)
            _ = try #require(run.result(), "the run did not finish after complete").get()
            #expect(try S.version(on: connection) == "v2")
            #expect(try Self.pairs(S.store, new, on: connection) == expected)
            #expect(try connection.execute("SELECT title FROM shop.recipe WHERE _pk = \(recipe)").rows == [["new release recipe"]])
        }
    }
}
