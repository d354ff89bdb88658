import Testing
import Mapping
import ObjectModel
@testable import Planning

/// Which one-to-one columns an online heavyweight step logs the previous key of
/// (`CatchUpPointedRows`): those a path steps through from the side not keeping the column,
/// also deeper in a path, each once; none where the path reads the column's own side.
@Suite struct CatchUpPointedRowsTests {
    typealias Kitchen = HeavyweightMigrationTests

    static let entities = """
        Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true}, card: {destination: Card, inverse: chef}}}
        Card: {attributes: {title: string}, relationships: {chef: {destination: Chef, inverse: card}}}
        Recipe: {attributes: {name: string}, relationships: {chef: {destination: Chef, inverse: recipes}}}
        """

    static func step(recipeName: String, chefName: String) throws -> PlannedStep {
        let mapping = MappingModel(source: "v1", destination: "v2", entityMappings: [
            EntityMappingDefinition(name: "CardToCard", type: .transform, sourceEntity: "Card", destinationEntity: "Card",
                                    attributeMappings: [PropertyMappingDefinition(name: "title", valueExpression: "$source.chef.name")]),
            EntityMappingDefinition(name: "ChefToChef", type: .transform, sourceEntity: "Chef", destinationEntity: "Chef",
                                    attributeMappings: [PropertyMappingDefinition(name: "name", valueExpression: chefName)]),
            EntityMappingDefinition(name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe",
                                    attributeMappings: [PropertyMappingDefinition(name: "name", valueExpression: recipeName)]),
        ], file: "cards.yaml")
        return try HeavyweightMigration.step(mapping: mapping, from: Kitchen.version("v1", entities), to: Kitchen.version("v2", entities), schema: "shop")
    }

    @Test func aOneToOneReadFromTheSideWithoutTheColumnLogsTheKeyItHeldOnceAlsoDeeperInAPath() throws {
        // The recipe reads the card through its chef; the chef reads it directly: one trigger.
        let step = try Self.step(recipeName: "$source.chef.card.title", chefName: "$source.card.title")
        #expect(step.staged?.refusal == nil)
        let catchUp = try #require(step.staged?.catchUp)
        #expect(catchUp.loggedPointers == ["card.chef_pk"])
        #expect(catchUp.install.filter { $0.sql.text.hasPrefix("CREATE TRIGGER \"\(OnlineCatchUp.pointedTrigger)\"") }.map(\.sql.text) == ["""
            CREATE TRIGGER "_orchestrator_pointed_row" AFTER UPDATE OF "chef_pk" OR DELETE ON "shop"."card" FOR EACH ROW EXECUTE FUNCTION "shop~staging"."_record_row_change"('chef', 'chef_pk')
            """])
        // The chef a card left joins the keys; the recipes reading it through their chef follow.
        let paths = OnlineCatchUpTests.statements(step).filter { $0.hasPrefix(#"INSERT INTO "shop~staging"."_catch_up_keys""#) }
        #expect(paths.contains { $0.contains(#"SELECT DISTINCT 'recipe', s._pk"#) && $0.hasSuffix("""
            WHERE "s.chef"."_pk" IN (SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = 'chef')
            ON CONFLICT DO NOTHING
            """) })
    }

    @Test func aOneToOneReadFromTheSideKeepingTheColumnLogsNothingMore() throws {
        // The card keeps chef_pk: a card re-pointed is written itself.
        let step = try Self.step(recipeName: "$source.name", chefName: "$source.name")
        let catchUp = try #require(step.staged?.catchUp)
        #expect(catchUp.loggedPointers.isEmpty)
        #expect(!catchUp.install.contains { $0.sql.text.hasPrefix("CREATE TRIGGER \"\(OnlineCatchUp.pointedTrigger)\"") })
        #expect(OnlineCatchUp.phases(of: step, store: "shop").first?.summary == "install the change logs and the row triggers on shop.chef, shop.card, shop.recipe; a TRUNCATE logs the keys of the rows it removes")
    }
}
