import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// Mapping models whose expressions compile to SQL, applied set-based to stores holding rows:
/// the new store is built beside the old one and swapped in, the old one kept as `<store>~`.
@Suite(integration) struct HeavyweightMigrationTests {
    typealias S = MigratedStore

    /// The seeds' kitchen: amount becomes totalCost, Fahrenheit becomes Celsius, and
    /// Recipe.chef becomes Recipe.author.
    static func kitchen() throws -> VersionedModel {
        try S.model([
            ("Kitchen 1", S.version("""
                Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true}}}
                Recipe: {attributes: {name: string, amount: int32, temperature: double}, relationships: {chef: {destination: Chef, inverse: recipes}}}
                """)),
            ("Kitchen 2", S.version("""
                Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: author, toMany: true}}}
                Recipe: {attributes: {name: string, totalCost: int64, temperatureC: double}, relationships: {author: {destination: Chef, inverse: recipes}}}
                """)),
        ])
    }

    static func kitchenMapping(filter: String? = nil) -> MappingModel {
        MappingModel(source: "Kitchen 1", destination: "Kitchen 2", entityMappings: [
            EntityMappingDefinition(name: "ChefToChef", type: .copy, sourceEntity: "Chef", destinationEntity: "Chef"),
            EntityMappingDefinition(
                name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe", filter: filter,
                attributeMappings: [
                    PropertyMappingDefinition(name: "totalCost", valueExpression: "$source.amount"),
                    PropertyMappingDefinition(name: "temperatureC", valueExpression: "($source.temperature - 32.0) / 1.8"),
                ],
                relationshipMappings: [
                    PropertyMappingDefinition(name: "author", valueExpression: #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToChef", $source.chef)"#),
                ]
            ),
        ], file: "kitchen-1-to-2.yaml")
    }

    static func migrator(_ model: VersionedModel, _ mapping: MappingModel, on connection: PostgresConnection) -> StoreMigrator {
        StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(mapping)])
    }

    /// (recipe name, chef name) pairs of a schema, through the given to-one column.
    static func links(schema: String, column: String, on connection: PostgresConnection) throws -> [[String?]] {
        try connection.execute("""
            SELECT r.name AS recipe, c.name AS chef FROM \(ident: schema, "recipe") r LEFT JOIN \(ident: schema, "chef") c ON c._pk = r.\(ident: column)
            ORDER BY r.name
            """).rows
    }

    @Test func aTransformMappingRenamesConvertsAndRelinksEveryRow() throws {
        let model = try Self.kitchen()
        try S.withStore(model) { connection in
            let recipes = try S.rows("recipe", ["name", "amount", "temperature"], on: connection)
            let chefs = try S.rows("chef", ["name"], on: connection)
            let links = try Self.links(schema: S.store, column: "chef_pk", on: connection)
            #expect(recipes.count == 300 && links.contains { $0[1] == nil } && links.contains { $0[1] != nil })

            let report = try Self.migrator(model, Self.kitchenMapping(), on: connection).apply()
            #expect(report.appliedSteps.map(\.step.kind) == [.heavyweight])

            // totalCost is amount, under its new name; the names are kept, row for row.
            let migrated = try S.rows("recipe", ["name", "total_cost", "temperature_c"], on: connection)
            #expect(migrated.map { Array($0[0...2]) } == recipes.map { Array($0[0...2]) })
            // Celsius from Fahrenheit, numerically; a missing temperature stays missing.
            for (old, new) in zip(recipes, migrated) {
                guard let fahrenheit = old[3].flatMap(Double.init) else {
                    #expect(new[3] == nil)
                    continue
                }
                let celsius = try #require(new[3].flatMap(Double.init))
                #expect(abs(celsius - (fahrenheit - 32.0) / 1.8) < 1e-9)
            }
            #expect(try S.rows("chef", ["name"], on: connection) == chefs)
            // Every recipe keeps its chef, now its author.
            #expect(try Self.links(schema: S.store, column: "author_pk", on: connection) == links)

            // The old store is kept as the backup, rows and all.
            #expect(try Self.links(schema: "shop~", column: "chef_pk", on: connection) == links)
            #expect(try connection.execute("SELECT count(*) AS n FROM \"shop~\".recipe WHERE amount IS NOT NULL").int(0, "n") == 240)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname IN ('shop~staging')").int(0, "n") == 0)

            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try S.history(on: connection) == ["create - -> Kitchen 1 succeeded", "heavyweight Kitchen 1 -> Kitchen 2 succeeded"])
            #expect(try Self.migrator(model, Self.kitchenMapping(), on: connection).plan().isUpToDate)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func aSourceFilterDropsTheRowsItRejectsAndKeepsTheOthers() throws {
        let model = try Self.kitchen()
        try S.withStore(model) { connection in
            let kept = try S.rows("recipe", ["name", "amount"], where: "amount > 100", on: connection)
            let links = try Self.links(schema: S.store, column: "chef_pk", on: connection)
            #expect(kept.count > 100 && kept.count < 300)

            let migrator = Self.migrator(model, Self.kitchenMapping(filter: "amount > 100"), on: connection)
            #expect(throws: DataLossNotAllowed.self) { try migrator.apply() }
            _ = try migrator.apply(options: ApplyOptions(allowDataLoss: true))

            let migrated = try S.rows("recipe", ["name", "total_cost"], on: connection)
            #expect(migrated.map { Array($0[1...2]) } == kept.map { Array($0[1...2]) })
            let keptNames = Set(kept.compactMap { $0[1] })
            #expect(try Self.links(schema: S.store, column: "author_pk", on: connection) == links.filter { keptNames.contains($0[0] ?? "") })
            // Rejected rows are gone from the store, still in the backup.
            #expect(try connection.execute("SELECT count(*) AS n FROM \"shop~\".recipe").int(0, "n") == 300)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func aMappingWithAnUnregisteredPolicyIsRefusedBeforeAnythingRuns() throws {
        let model = try Self.kitchen()
        var mapping = Self.kitchenMapping()
        mapping.entityMappings[1].policy = "RecipePolicy"
        try S.withStore(model, rows: 20) { (connection: PostgresConnection) throws in
            let refusal = #expect(throws: NotExecutable.self) { _ = try Self.migrator(model, mapping, on: connection).apply() }
            #expect(refusal?.blockers == [
                "'Kitchen 1' -> 'Kitchen 2': kitchen-1-to-2.yaml: entity mapping RecipeToRecipe: custom policy 'RecipePolicy' is not registered (none is registered); build an orchestrator executable that registers it, see docs/custom-policies.md",
            ])
            #expect(try S.version(on: connection) == "Kitchen 1")
        }
    }

    @Test func aFailingStepLeavesTheStoreAsItWas() throws {
        let model = try Self.kitchen()
        var mapping = Self.kitchenMapping()
        // Division by zero on every row: stage 1 of RecipeToRecipe fails inside its pass.
        mapping.entityMappings[1].attributeMappings[1].valueExpression = "$source.temperature / 0.0"
        try S.withStore(model, rows: 20) { (connection: PostgresConnection) throws in
            let before = try S.rows("recipe", ["name", "amount"], on: connection)
            #expect(throws: StepFailure.self) { _ = try Self.migrator(model, mapping, on: connection).apply() }
            #expect(try S.rows("recipe", ["name", "amount"], on: connection) == before)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'shop~'").int(0, "n") == 0)
            #expect(try S.version(on: connection) == "Kitchen 1")
            // The passes before it are kept for the next run: prepare and ChefToChef's stage 1.
            #expect(try connection.execute("SELECT name FROM orchestrator.checkpoints WHERE store = 'shop' AND kind = 'heavyweight' AND pass > 0 ORDER BY pass").rows == [["prepare"], ["createInstances ChefToChef"]])
            #expect(try connection.execute("SELECT count(*) AS n FROM \"shop~staging\".recipe").int(0, "n") == 0)
            // Fixed, the mapping model is another plan: its staging is not continued but refused...
            let fixed = Self.kitchenMapping()
            let mismatch = #expect(throws: StagingMismatch.self) { _ = try Self.migrator(model, fixed, on: connection).apply() }
            #expect(mismatch?.description.contains("--restart") == true)
            #expect(try S.rows("recipe", ["name", "amount"], on: connection) == before)
            // ...until --restart discards it.
            _ = try Self.migrator(model, fixed, on: connection).apply(options: ApplyOptions(restart: true))
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == 20)
        }
    }

    @Test func unmappedPropertiesGetXcodesDefaultsAndAHierarchyMappedPerEntityIsCopiedOnce() throws {
        let shelves = "Shelf: {attributes: {label: string}, relationships: {items: {destination: Item, inverse: shelf, toMany: true}}}"
        let model = try S.model([
            ("v1", S.version("Item: {attributes: {title: string}, relationships: {shelf: {destination: Shelf, inverse: items}}}\nBook: {parent: Item, attributes: {isbn: string}}\n" + shelves)),
            ("v2", S.version("Item: {attributes: {title: string, code: string}, relationships: {shelf: {destination: Shelf, inverse: items}}}\nBook: {parent: Item, attributes: {isbn: string}}\n" + shelves)),
        ])
        // Only `code` is written; everything else is Xcode's default.
        let mapping = MappingModel(source: "v1", destination: "v2", entityMappings: [
            EntityMappingDefinition(name: "ShelfToShelf", type: .copy, sourceEntity: "Shelf", destinationEntity: "Shelf"),
            EntityMappingDefinition(name: "ItemToItem", type: .transform, sourceEntity: "Item", destinationEntity: "Item",
                                    attributeMappings: [PropertyMappingDefinition(name: "code", valueExpression: "uppercase:($source.title)")]),
            EntityMappingDefinition(name: "BookToBook", type: .transform, sourceEntity: "Book", destinationEntity: "Book",
                                    attributeMappings: [PropertyMappingDefinition(name: "code", valueExpression: "$source.isbn")]),
        ], file: "v1-to-v2.yaml")
        try S.withStore(model, rows: 200) { connection in
            // Rows as lines, sorted: several rows are alike (missing title and shelf).
            func items() throws -> [String] {
                try connection.execute("SELECT concat_ws('|', i._entity, coalesce(i.title, '-'), coalesce(i.isbn, '-'), coalesce(s.label, '-')) AS line FROM shop.item i LEFT JOIN shop.shelf s ON s._pk = i.shelf_pk ORDER BY 1")
                    .rows.map { $0[0] ?? "" }
            }
            let before = try items()
            #expect(before.count == 400)

            _ = try Self.migrator(model, mapping, on: connection).apply()

            let after = try items()
            #expect(after.count == before.count)
            #expect(after == before)
            let codes = try connection.execute("SELECT count(*) FILTER (WHERE _entity = 'Item' AND code IS NOT DISTINCT FROM upper(title)) AS items, count(*) FILTER (WHERE _entity = 'Book' AND code IS NOT DISTINCT FROM isbn) AS books FROM shop.item")
            #expect(codes.rows == [["200", "200"]])
            try S.expectFollowsContract(model, on: connection)
        }
    }
}
