import Testing
@testable import Planning

/// A column renamed with its property.
/// The change: Planning/Changes/RenameColumn.swift.
@Suite struct RenameColumnTests: RuleRows {
    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("renaming an attribute renames its column", from: M.recipe, to: M.recipe("title: {type: string, renamingIdentifier: name}"), [
            #"ALTER TABLE "s"."recipe" RENAME COLUMN "name" TO "title""#,
        ]),
        .init("renaming a to-one renames its column, foreign key and index", from: M.chefAndRecipes,
              to: "Recipe: {relationships: {cook: {destination: Chef, inverse: recipes, renamingIdentifier: chef}}}\nChef: {relationships: {recipes: {destination: Recipe, inverse: cook, toMany: true}}}", [
            #"ALTER TABLE "s"."recipe" RENAME COLUMN "chef_pk" TO "cook_pk""#,
            #"ALTER TABLE "s"."recipe" RENAME CONSTRAINT "recipe_chef_pk_fkey" TO "recipe_cook_pk_fkey""#,
            #"ALTER INDEX "s"."recipe_chef_pk_idx" RENAME TO "recipe_cook_pk_idx""#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
