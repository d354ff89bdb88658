import Testing
import Mapping
import ObjectModel
@testable import Planning

/// What a heavyweight step refuses or asks consent for beyond its mapping's own rows: the
/// team's objects dropped with an old store not kept, and entity mappings repeating one pair.
@Suite struct TeamObjectsAndDuplicatesTests {
    typealias V = RowsLeftBehindTests

    static let extras = [
        ExtraObject(table: "recipe", column: "note", holdsRows: true),
        ExtraObject(table: "shelf", holdsRows: true),
        ExtraObject(table: "bin", holdsRows: false),
    ]

    static func step(_ entityMappings: [EntityMappingDefinition], keepsBackup: Bool, extras: [ExtraObject] = Self.extras) throws(HeavyweightRefusal) -> PlannedStep {
        let mapping = MappingModel(source: "Kitchen 1", destination: "Kitchen 2", entityMappings: entityMappings, file: "kitchen.yaml")
        return try HeavyweightMigration.step(
            mapping: mapping, from: try! HeavyweightMigrationTests.version("Kitchen 1", V.entities),
            to: try! HeavyweightMigrationTests.version("Kitchen 2", V.entities), schema: "shop", keepsBackup: keepsBackup, extras: extras
        )
    }

    static let spices = EntityMappingDefinition(name: "SpiceToSpice", type: .copy, sourceEntity: "Spice", destinationEntity: "Spice")

    @Test func extraObjectsHoldingRowsAreDataLossOnlyWhenTheOldStoreIsDropped() throws {
        let dropped = try Self.step([V.chefs, V.recipes(), Self.spices], keepsBackup: false)
        #expect(dropped.hazards.filter(\.isDataLoss).map(\.message) == [
            "column recipe.note of store shop is not in the contract (extra drift, the team's own): its values are dropped with the old store, which is not kept (no backup)",
            "table shelf of store shop is not in the contract (extra drift, the team's own): its rows are dropped with the old store, which is not kept (no backup)",
        ])
        #expect(dropped.hazards.first { $0.code == Hazard.Code.tableRewrite }?.message.hasSuffix(
            "; the old store is dropped once the new one is in place; the empty extra table bin goes with it"
        ) == true)
        let kept = try Self.step([V.chefs, V.recipes(), Self.spices], keepsBackup: true)
        #expect(kept.hazards.filter(\.isDataLoss).isEmpty)
        #expect(kept.hazards.first { $0.code == Hazard.Code.tableRewrite }?.message.hasSuffix("the old store is kept as schema shop~") == true)
        let nothingExtra = try Self.step([V.chefs, V.recipes(), Self.spices], keepsBackup: false, extras: [])
        #expect(nothingExtra.hazards.filter(\.isDataLoss).isEmpty)
    }

    @Test func onlyTheFirstHeavyweightStepOfAChainMeetsTheTeamsObjects() throws {
        let versions = try ["Kitchen 1", "Kitchen 2", "Kitchen 3"].map { try HeavyweightMigrationTests.version($0, V.entities) }
        let model = VersionedModel(name: "Kitchen", versions: versions, currentVersionName: "Kitchen 3", path: "kitchen", format: .native)
        let mappings = [("Kitchen 1", "Kitchen 2"), ("Kitchen 2", "Kitchen 3")].map { source, destination in
            ExplicitMapping(MappingModel(source: source, destination: destination, entityMappings: [V.chefs, V.recipes(), Self.spices], file: "\(source).yaml"))
        }
        let steps = try Planner.steps(
            model: model, from: model.versions[0], to: model.versions[2], schema: "shop", explicitMappings: mappings,
            options: PlanningOptions(keepBackup: false), extras: Self.extras
        ).get()
        #expect(steps.map { $0.hazards.filter(\.isDataLoss).count } == [2, 0])
    }

    @Test func entityMappingsRepeatingOnePairWithTheSameFilterAreRefused() throws {
        let copies = (1...5000).map { EntityMappingDefinition(name: "ChefToChef\($0)", type: .copy, sourceEntity: "Chef", destinationEntity: "Chef") }
        let refusal = #expect(throws: HeavyweightRefusal.self) { try Self.step(copies + [V.recipes(), Self.spices], keepsBackup: true) }
        #expect(refusal?.reasons == [
            "'Kitchen 1' -> 'Kitchen 2': 5000 entity mappings (ChefToChef1, ChefToChef2, ChefToChef3 and 4997 more) read Chef into Chef with no filter: each source row would become 5000 rows; keep one, or give each a filter of its own",
        ])
        let filtered = [V.recipes(filter: "amount > 3"), EntityMappingDefinition(name: "Again", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe", filter: "amount > 3")]
        #expect(MappingModel(source: "Kitchen 1", destination: "Kitchen 2", entityMappings: filtered, file: "k.yaml").duplicateEntityMappingReasons == [
            "2 entity mappings (RecipeToRecipe, Again) read Recipe into Recipe with the same filter (amount > 3): each source row would become 2 rows; keep one, or give each a filter of its own",
        ])
        // Distinct filters may split the rows: kept.
        let split = [V.chefs, V.recipes(filter: "amount > 3"), EntityMappingDefinition(name: "Small", type: .copy, sourceEntity: "Recipe", destinationEntity: "Recipe", filter: "amount <= 3"), Self.spices]
        #expect(throws: Never.self) { try Self.step(split, keepsBackup: true) }
    }
}
