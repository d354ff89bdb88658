import Testing
@testable import Planning

/// NOT NULL dropped from a column made optional.
/// The change: Planning/Changes/DropNotNull.swift.
@Suite struct DropNotNullTests: RuleRows {
    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("making an attribute optional drops NOT NULL", from: M.recipe("name: {type: string, optional: false}"), to: M.recipe, [
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "name" DROP NOT NULL"#,
        ]),
        .init("making a to-one optional drops NOT NULL", from: M.recipeAndChef(recipe: "destination: Chef, inverse: recipes, optional: false", chef: "destination: Recipe, inverse: chef, toMany: true"),
              to: M.chefAndRecipes, [
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "chef_pk" DROP NOT NULL"#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
