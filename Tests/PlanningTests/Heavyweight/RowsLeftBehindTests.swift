import Testing
import Mapping
import ObjectModel
@testable import Planning

/// The `dataLoss` hazards of rows a mapping model leaves behind, and the row estimates they
/// name (from the store snapshot's statistics).
@Suite struct RowsLeftBehindTests {
    typealias V = HeavyweightMigrationTests
    static let entities = """
        Chef: {attributes: {name: string}}
        Recipe: {attributes: {name: string, amount: int32}}
        Spice: {parent: Recipe, attributes: {heat: int16}}
        """

    static func hazards(_ entityMappings: [EntityMappingDefinition], estimates: RowEstimates = RowEstimates(), keepsBackup: Bool = true) throws -> [Hazard] {
        let mapping = MappingModel(source: "Kitchen 1", destination: "Kitchen 2", entityMappings: entityMappings, file: "kitchen.xcmappingmodel")
        return try HeavyweightMigration.step(
            mapping: mapping, from: V.version("Kitchen 1", entities), to: V.version("Kitchen 2", entities), schema: "shop",
            keepsBackup: keepsBackup, rowEstimates: estimates
        ).hazards.filter(\.isDataLoss)
    }

    static let chefs = EntityMappingDefinition(name: "ChefToChef", type: .copy, sourceEntity: "Chef", destinationEntity: "Chef")
    static func recipes(filter: String? = nil) -> EntityMappingDefinition {
        EntityMappingDefinition(name: "RecipeToRecipe", type: .copy, sourceEntity: "Recipe", destinationEntity: "Recipe", filter: filter)
    }

    @Test func everyRowReadByAnUnfilteredMappingIsNoHazard() throws {
        #expect(try Self.hazards([Self.chefs, Self.recipes()]).isEmpty)
        // Rows one mapping filters, another reads unfiltered: all of them reach the new store.
        let spices = EntityMappingDefinition(name: "SpiceToRecipe", type: .copy, sourceEntity: "Spice", destinationEntity: "Recipe", filter: "heat > 3")
        let allSpices = EntityMappingDefinition(name: "SpiceToSpice", type: .copy, sourceEntity: "Spice", destinationEntity: "Spice")
        #expect(try Self.hazards([Self.chefs, Self.recipes(), spices, allSpices]).isEmpty)
    }

    @Test func eachEntityLeftBehindIsNamedWithWhyAndWhereItsRowsStay() throws {
        let removal = EntityMappingDefinition(name: "NoChefs", type: .remove, sourceEntity: "Chef", destinationEntity: nil)
        let hazards = try Self.hazards([removal, Self.recipes(filter: "amount > 3")])
        #expect(hazards.map(\.message) == [
            "rows of Chef do not reach the new store: the remove mapping NoChefs drops them; kept only in the backup schema shop~",
            "rows of Recipe do not reach the new store: those the filter of RecipeToRecipe rejects; kept only in the backup schema shop~",
            // RecipeToRecipe reads its sub-entity Spice too, filtered.
            "rows of Spice do not reach the new store: those the filter of RecipeToRecipe rejects; kept only in the backup schema shop~",
        ])
        #expect(try Self.hazards([]).map(\.entity) == ["Chef", "Recipe", "Spice"])
        #expect(try Self.hazards([Self.recipes()], keepsBackup: false).map(\.message) == [
            "rows of Chef do not reach the new store: no entity mapping reads them; dropped with the old store",
        ])
    }

    @Test func theEstimatesComeFromTheSnapshotPerTableAndPerEntity() throws {
        let analyzed = RowEstimates(tables: ["chef": 12, "recipe": 40], entityShares: ["recipe": ["Recipe": 0.75, "Spice": 0.25]])
        #expect(try Self.hazards([], estimates: analyzed).map(\.estimatedRows) == [
            RowCount(rows: 12, isUpperBound: false), RowCount(rows: 30, isUpperBound: false), RowCount(rows: 10, isUpperBound: false),
        ])
        // A filter rejects at most every row; a shared table without statistics per entity
        // gives at most its rows; a table not estimated gives no count.
        let unanalyzed = RowEstimates(tables: ["recipe": 40])
        #expect(try Self.hazards([Self.recipes(filter: "amount > 3")], estimates: unanalyzed).map(\.estimatedRows) == [
            nil, RowCount(rows: 40, isUpperBound: true), RowCount(rows: 40, isUpperBound: true),
        ])
        #expect(try Self.hazards([Self.chefs], estimates: unanalyzed).first?.message
            == "rows of Recipe (up to 40 rows) do not reach the new store: no entity mapping reads them; kept only in the backup schema shop~")
    }

    @Test func anEntityMissingFromTheMostCommonValuesGetsAtMostTheRowsTheOthersLeave() {
        let estimates = RowEstimates(tables: ["recipe": 1000], entityShares: ["recipe": ["Recipe": 0.99]])
        #expect(estimates.rows(of: "Spice", in: "recipe", tableEntities: ["Recipe", "Spice"]) == RowCount(rows: 10, isUpperBound: true))
        #expect(estimates.rows(of: "Chef", in: "chef", tableEntities: ["Chef"]) == nil)
        #expect(RowCount(rows: 1, isUpperBound: false).description == "about 1 row")
    }
}
