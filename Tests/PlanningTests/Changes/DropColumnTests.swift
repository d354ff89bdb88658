import Testing
@testable import Planning

/// A column dropped: an attribute removed or made transient, a to-one removed, an order column no
/// longer needed.
/// The change: Planning/Changes/DropColumn.swift.
@Suite struct DropColumnTests: RuleRows {
    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("removing an attribute drops its column", from: M.recipe("name: string, notes: string"), to: M.recipe, [
            #"ALTER TABLE "s"."recipe" DROP COLUMN "notes""#,
        ]),
        .init("making a stored attribute transient drops its column", from: M.recipe("name: string, notes: string"),
              to: M.recipe("name: string, notes: {type: string, transient: true}"), [
            #"ALTER TABLE "s"."recipe" DROP COLUMN "notes""#,
        ]),
        .init("removing an entity drops the columns pointing at it first", from: M.chefAndRecipes, to: "Recipe: {}", [
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "recipe_chef_pk_fkey""#,
            #"DROP INDEX "s"."recipe_chef_pk_idx""#,
            #"ALTER TABLE "s"."recipe" DROP COLUMN "chef_pk""#,
            #"DROP TABLE "s"."chef""#,
        ]),
        .init("removing a to-one drops its foreign key, index and column", from: M.chefAndRecipes, to: "Recipe: {}\nChef: {}", [
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "recipe_chef_pk_fkey""#,
            #"DROP INDEX "s"."recipe_chef_pk_idx""#,
            #"ALTER TABLE "s"."recipe" DROP COLUMN "chef_pk""#,
        ]),
        .init("making a one-to-many unordered drops the order column",
              from: M.recipeAndChef(recipe: "destination: Chef, inverse: recipes", chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true"),
              to: M.chefAndRecipes, [
            #"ALTER TABLE "s"."recipe" DROP COLUMN "chef_order""#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
