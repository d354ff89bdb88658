import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// No row leaves the live store unless `plan` names it and `apply` was given `allowDataLoss`:
/// native mapping files get Xcode's generated entity mappings for the entities they do not
/// mention; rows a mapping model (native or Xcode) still leaves behind are `dataLoss` hazards
/// naming each entity and its estimated rows, backup or not. Mapping files are read from disk
/// by the loader, as `plan` and `apply` read them.
@Suite(integration) struct RowsLeftBehindTests {
    typealias S = MigratedStore
    static let rows = 20

    /// Chef 1-n Recipe 1-n Ingredient, with Spice a sub-entity of Ingredient (one table of two
    /// entities); Kitchen 2 adds Recipe.title.
    static func kitchen() throws -> VersionedModel {
        let entities = """
            Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true}}}
            Ingredient: {attributes: {name: string}, relationships: {recipe: {destination: Recipe, inverse: ingredients}}}
            Spice: {parent: Ingredient, attributes: {heat: int16}}
            """
        return try S.model([
            ("Kitchen 1", S.version(entities + """

                Recipe: {attributes: {name: string, amount: int32}, relationships: {chef: {destination: Chef, inverse: recipes}, ingredients: {destination: Ingredient, inverse: recipe, toMany: true}}}
                """)),
            ("Kitchen 2", S.version(entities + """

                Recipe: {attributes: {name: string, amount: int32, title: string}, relationships: {chef: {destination: Chef, inverse: recipes}, ingredients: {destination: Ingredient, inverse: recipe, toMany: true}}}
                """)),
        ])
    }

    /// Every row of the store's tables by `_pk`, all columns as text.
    static func snapshot(schema: String = S.store, on connection: PostgresConnection) throws -> [String: [[String?]]] {
        var tables: [String: [[String?]]] = [:]
        for (table, columns) in [("chef", ["name"]), ("recipe", ["name", "amount", "chef_pk"]), ("ingredient", ["_entity", "name", "heat", "recipe_pk"])] {
            tables[table] = try connection.execute("SELECT \(idents: ["_pk"] + columns) FROM \(ident: schema, table) ORDER BY _pk").rows
        }
        return tables
    }

    static func counts(schema: String = S.store, on connection: PostgresConnection) throws -> [Int64?] {
        try ["chef", "recipe", "ingredient"].map { try connection.execute("SELECT count(*) AS n FROM \(ident: schema, $0)").int(0, "n") }
    }

    static func schemaExists(_ name: String, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname = \(name)").int(0, "n") == 1
    }

    /// A mapping model written to a temporary folder and read back by the loader.
    static func loaded(_ name: String, _ text: String) throws -> MappingModel {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rows-left-behind-" + UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: folder) }
        var path = folder.appendingPathComponent(name)
        if name.hasSuffix(".xcmappingmodel") {
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
            path = path.appendingPathComponent("xcmapping.xml")
        } else {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try text.write(to: path, atomically: true, encoding: .utf8)
        return try MappingModelLoader.load(path: folder.appendingPathComponent(name).path)
    }

    /// An `xcmapping.xml` as Xcode writes it, listing copy mappings `(source, destination)`
    /// without expressions (Xcode's defaults).
    static func xcodeMapping(_ entityMappings: [(String, String)]) -> String {
        let ids = entityMappings.indices.map { "z\($0 + 10)" }
        var lines = [
            #"<?xml version="1.0"?>"#, "<database>", "    <databaseInfo><version>134481920</version></databaseInfo>",
            #"    <object type="XDDEVMAPPINGMODEL" id="z1">"#,
            #"        <attribute name="sourcemodelpath" type="string">Kitchen/Kitchen.xcdatamodeld/Kitchen 1.xcdatamodel</attribute>"#,
            #"        <attribute name="destinationmodelpath" type="string">Kitchen/Kitchen.xcdatamodeld/Kitchen 2.xcdatamodel</attribute>"#,
            #"        <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING"\#(ids.isEmpty ? "" : #" idrefs=""# + ids.joined(separator: " ") + #"""#)></relationship>"#,
            "    </object>",
        ]
        for ((source, destination), id) in zip(entityMappings, ids) {
            lines += [
                #"    <object type="XDDEVENTITYMAPPING" id="\#(id)">"#,
                #"        <attribute name="sourcename" type="string">\#(source)</attribute>"#,
                #"        <attribute name="destinationname" type="string">\#(destination)</attribute>"#,
                #"        <attribute name="mappingtypename" type="string">Undefined</attribute>"#,
                #"        <relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z1"></relationship>"#,
                "    </object>",
            ]
        }
        return (lines + ["</database>"]).joined(separator: "\n") + "\n"
    }

    static func migrator(_ model: VersionedModel, _ mapping: MappingModel, on connection: PostgresConnection) -> StoreMigrator {
        StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(mapping)])
    }

    /// A filled store at Kitchen 1, analyzed so that the plan's estimates are exact.
    static func withKitchen(_ body: (VersionedModel, PostgresConnection) throws -> Void) throws {
        let model = try kitchen()
        try S.withStore(model, rows: rows) { connection in
            try connection.execute("SELECT pg_stat_force_next_flush()")  // the fill's counts first, as StreamingPathTests says
            try connection.execute("ANALYZE shop.chef, shop.recipe, shop.ingredient")
            try body(model, connection)
        }
    }

    @Test func aSparseNativeMappingModelCopiesEveryEntityItDoesNotMention() throws {
        let mapping = try Self.loaded("kitchen-1-to-2.yaml", """
            source: Kitchen 1
            destination: Kitchen 2
            entityMappings:
              - name: RecipeToRecipe
                type: transform
                source: Recipe
                destination: Recipe
                attributes:
                  title: "uppercase:($source.name)"
            """)
        try Self.withKitchen { model, connection in
            let before = try Self.snapshot(on: connection)
            #expect(before["chef"]?.count == Self.rows && before["ingredient"]?.count == 2 * Self.rows)
            #expect(before["ingredient"]?.contains { $0[4] != nil } == true && before["recipe"]?.contains { $0[3] != nil } == true)
            let migrator = Self.migrator(model, mapping, on: connection)
            let step = try #require(try migrator.plan().steps.first)
            #expect(step.hazards.filter(\.isDataLoss).isEmpty)
            #expect(step.passes.filter { $0.stage == .createInstances }.compactMap(\.entityMapping) == [
                "RecipeToRecipe", "ChefToChef", "IngredientToIngredient", "SpiceToSpice",
            ])

            _ = try migrator.apply()
            #expect(try S.version(on: connection) == "Kitchen 2")
            // Every row by its key, every value and link, Spice rows still Spice rows.
            #expect(try Self.snapshot(on: connection) == before)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe WHERE title IS DISTINCT FROM upper(name)").int(0, "n") == 0)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// Issue 9.4: `entityMappings: []` emptied every table. A native file lists what differs,
    /// so an empty one copies everything.
    @Test func aNativeMappingModelWithNoEntityMappingsCopiesEveryRow() throws {
        let mapping = try Self.loaded("kitchen-1-to-2.yaml", "source: Kitchen 1\ndestination: Kitchen 2\nentityMappings: []\n")
        try Self.withKitchen { model, connection in
            let before = try Self.snapshot(on: connection)
            let migrator = Self.migrator(model, mapping, on: connection)
            #expect(try migrator.plan().steps.first?.hazards.filter(\.isDataLoss).isEmpty == true)
            _ = try migrator.apply()
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try Self.snapshot(on: connection) == before)
        }
    }

    /// Issue 9.4 for an Xcode mapping model (which runs as written): listing no entity mapping
    /// leaves every row behind, which `plan` names per entity with its rows, and `apply` runs
    /// only with `allowDataLoss`, the backup notwithstanding.
    @Test func anXcodeMappingModelWithNoEntityMappingsRunsOnlyWithAllowDataLoss() throws {
        let mapping = try Self.loaded("Kitchen.xcmappingmodel", Self.xcodeMapping([]))
        #expect(mapping.entityMappings.isEmpty)
        try Self.withKitchen { model, connection in
            let before = try Self.snapshot(on: connection)
            let migrator = Self.migrator(model, mapping, on: connection)
            let plan = try migrator.plan()
            let losses = try #require(plan.steps.first).hazards.filter(\.isDataLoss)
            #expect(losses.map(\.entity) == ["Chef", "Ingredient", "Spice", "Recipe"])
            // Chef and Recipe fill their tables alone; Ingredient and Spice share one, each
            // estimated by the statistics of `_entity`.
            #expect(losses.map(\.estimatedRows) == Array(repeating: RowCount(rows: Self.rows, isUpperBound: false), count: 4))
            #expect(losses[0].message == "rows of Chef (about 20 rows) do not reach the new store: no entity mapping reads them; kept only in the backup schema shop~")

            let refusal = #expect(throws: DataLossNotAllowed.self) { try migrator.apply() }
            for entity in ["Chef", "Ingredient", "Spice", "Recipe"] {
                #expect(refusal?.description.contains("rows of \(entity) (about 20 rows) do not reach the new store") == true, "\(entity)")
            }
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try Self.snapshot(on: connection) == before)
            #expect(try !Self.schemaExists("shop~", on: connection) && !Self.schemaExists("shop~staging", on: connection))

            _ = try migrator.apply(options: ApplyOptions(allowDataLoss: true))
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try Self.counts(on: connection) == [0, 0, 0])
            #expect(try Self.snapshot(schema: "shop~", on: connection) == before)
        }
    }

    @Test func anXcodeMappingModelMissingAnEntityMappingNamesThatEntitysRows() throws {
        let mapping = try Self.loaded("Kitchen.xcmappingmodel", Self.xcodeMapping([("Chef", "Chef"), ("Recipe", "Recipe"), ("Spice", "Spice")]))
        try Self.withKitchen { model, connection in
            let before = try Self.snapshot(on: connection)
            let migrator = Self.migrator(model, mapping, on: connection)
            let losses = try #require(try migrator.plan().steps.first).hazards.filter(\.isDataLoss)
            #expect(losses.map(\.message) == [
                "rows of Ingredient (about 20 rows) do not reach the new store: no entity mapping reads them; kept only in the backup schema shop~",
            ])
            #expect(throws: DataLossNotAllowed.self) { try migrator.apply() }
            #expect(try Self.snapshot(on: connection) == before)

            _ = try migrator.apply(options: ApplyOptions(allowDataLoss: true))
            let after = try Self.snapshot(on: connection)
            #expect(after["chef"] == before["chef"])
            #expect(after["recipe"] == before["recipe"])
            #expect(after["ingredient"] == before["ingredient"]?.filter { $0[1] == "Spice" })
        }
    }

    @Test func aNativeRemoveMappingIsDataLossEvenWithABackup() throws {
        let mapping = try Self.loaded("kitchen-1-to-2.yaml", """
            source: Kitchen 1
            destination: Kitchen 2
            entityMappings:
              - {name: SpicesGo, type: remove, source: Spice}
            """)
        try Self.withKitchen { model, connection in
            let before = try Self.snapshot(on: connection)
            let migrator = Self.migrator(model, mapping, on: connection)
            let step = try #require(try migrator.plan().steps.first)
            // Every other entity is copied by the generated mappings.
            #expect(step.hazards.filter(\.isDataLoss).map(\.message) == [
                "rows of Spice (about 20 rows) do not reach the new store: the remove mapping SpicesGo drops them; kept only in the backup schema shop~",
            ])
            #expect(throws: DataLossNotAllowed.self) { try migrator.apply() }
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try Self.snapshot(on: connection) == before)

            _ = try migrator.apply(options: ApplyOptions(allowDataLoss: true))
            let after = try Self.snapshot(on: connection)
            #expect(after["chef"] == before["chef"] && after["recipe"] == before["recipe"])
            #expect(after["ingredient"] == before["ingredient"]?.filter { $0[1] == "Ingredient" })
        }
    }

    @Test func aFilterLeavingRowsOutIsDataLoss() throws {
        let mapping = try Self.loaded("kitchen-1-to-2.yaml", """
            source: Kitchen 1
            destination: Kitchen 2
            entityMappings:
              - {name: BigRecipes, type: copy, source: Recipe, destination: Recipe, filter: "amount > 10"}
            """)
        try Self.withKitchen { model, connection in
            let before = try Self.snapshot(on: connection)
            let kept = try connection.execute("SELECT _pk FROM shop.recipe WHERE amount > 10 ORDER BY _pk").rows.map { $0[0] }
            #expect(!kept.isEmpty && kept.count < Self.rows)
            let migrator = Self.migrator(model, mapping, on: connection)
            #expect(try #require(try migrator.plan().steps.first).hazards.filter(\.isDataLoss).map(\.message) == [
                "rows of Recipe (up to 20 rows) do not reach the new store: those the filter of BigRecipes rejects; kept only in the backup schema shop~",
            ])
            #expect(throws: DataLossNotAllowed.self) { try migrator.apply() }
            #expect(try Self.snapshot(on: connection) == before)

            _ = try migrator.apply(options: ApplyOptions(allowDataLoss: true))
            let after = try Self.snapshot(on: connection)
            #expect(after["recipe"] == before["recipe"]?.filter { kept.contains($0[0]) })
            #expect(after["chef"] == before["chef"])
            #expect(after["ingredient"]?.count == 2 * Self.rows)
        }
    }
}
