import Testing
@testable import Planning

/// A table renamed: an entity's, a join table named after one, a root's under a new parent.
/// The change: Planning/Changes/RenameTable.swift.
@Suite struct RenameTableTests: RuleRows {
    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("renaming a root entity renames its table, primary key, sequence and rows' _entity", from: M.recipe,
              to: "Dish: {renamingIdentifier: Recipe, attributes: {name: string}}", [
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "recipe_entity_check""#,
            #"ALTER TABLE "s"."recipe" RENAME TO "dish""#,
            #"ALTER TABLE "s"."dish" RENAME CONSTRAINT "recipe_pkey" TO "dish_pkey""#,
            #"ALTER SEQUENCE "s"."recipe__pk_seq" RENAME TO "dish__pk_seq""#,
            #"UPDATE "s"."dish" SET "_entity" = CASE "_entity" WHEN 'Recipe' THEN 'Dish' END WHERE "_entity" IN ('Recipe')"#,
            #"ALTER TABLE "s"."dish" ALTER COLUMN "_entity" SET DEFAULT 'Dish'"#,
            #"ALTER TABLE "s"."dish" ADD CONSTRAINT "dish_entity_check" CHECK ("_entity" IN ('Dish'))"#,
        ]),
        .init("renaming an entity renames the join tables named after it", from: "Tag: {relationships: {related: {destination: Tag, toMany: true}}}",
              to: "Label: {renamingIdentifier: Tag, relationships: {related: {destination: Label, toMany: true}}}", [
            #"ALTER TABLE "s"."tag" DROP CONSTRAINT "tag_entity_check""#,
            #"ALTER TABLE "s"."tag" RENAME TO "label""#,
            #"ALTER TABLE "s"."label" RENAME CONSTRAINT "tag_pkey" TO "label_pkey""#,
            #"ALTER SEQUENCE "s"."tag__pk_seq" RENAME TO "label__pk_seq""#,
            #"ALTER TABLE "s"."tag__related" RENAME TO "label__related""#,
            #"ALTER TABLE "s"."label__related" RENAME CONSTRAINT "tag__related_pkey" TO "label__related_pkey""#,
            #"ALTER TABLE "s"."label__related" RENAME COLUMN "tag_pk" TO "label_pk""#,
            #"ALTER TABLE "s"."label__related" RENAME CONSTRAINT "tag__related_tag_pk_fkey" TO "label__related_label_pk_fkey""#,
            #"ALTER TABLE "s"."label__related" RENAME CONSTRAINT "tag__related_related_pk_fkey" TO "label__related_related_pk_fkey""#,
            #"ALTER INDEX "s"."tag__related_related_pk_idx" RENAME TO "label__related_related_pk_idx""#,
            #"UPDATE "s"."label" SET "_entity" = CASE "_entity" WHEN 'Tag' THEN 'Label' END WHERE "_entity" IN ('Tag')"#,
            #"ALTER TABLE "s"."label" ALTER COLUMN "_entity" SET DEFAULT 'Label'"#,
            #"ALTER TABLE "s"."label" ADD CONSTRAINT "label_entity_check" CHECK ("_entity" IN ('Label'))"#,
        ]),
        .init("adding a parent above a root renames the table after the new root", from: "Dog: {attributes: {bark: string}}",
              to: "Animal: {attributes: {legs: {type: int16, optional: false, default: 4}}}\nDog: {parent: Animal, attributes: {bark: string}}", [
            #"ALTER TABLE "s"."dog" DROP CONSTRAINT "dog_entity_check""#,
            #"ALTER TABLE "s"."dog" RENAME TO "animal""#,
            #"ALTER TABLE "s"."animal" RENAME CONSTRAINT "dog_pkey" TO "animal_pkey""#,
            #"ALTER SEQUENCE "s"."dog__pk_seq" RENAME TO "animal__pk_seq""#,
            #"ALTER TABLE "s"."animal" ALTER COLUMN "_entity" DROP DEFAULT"#,
            #"ALTER TABLE "s"."animal" ADD COLUMN "legs" smallint NOT NULL DEFAULT 4"#,
            #"ALTER TABLE "s"."animal" ADD CONSTRAINT "animal_entity_check" CHECK ("_entity" IN ('Animal', 'Dog'))"#,
        ]),
        .init("renaming the owning side of a many-to-many renames the join table, its columns and constraints", from: manyToMany,
              to: "Recipe: {relationships: {labels: {destination: Tag, inverse: recipes, toMany: true, renamingIdentifier: tags}}}\nTag: {relationships: {recipes: {destination: Recipe, inverse: labels, toMany: true}}}", [
            #"ALTER TABLE "s"."recipe__tags" RENAME TO "recipe__labels""#,
            #"ALTER TABLE "s"."recipe__labels" RENAME CONSTRAINT "recipe__tags_pkey" TO "recipe__labels_pkey""#,
            #"ALTER TABLE "s"."recipe__labels" RENAME COLUMN "tags_pk" TO "labels_pk""#,
            #"ALTER TABLE "s"."recipe__labels" RENAME CONSTRAINT "recipe__tags_recipe_pk_fkey" TO "recipe__labels_recipe_pk_fkey""#,
            #"ALTER TABLE "s"."recipe__labels" RENAME CONSTRAINT "recipe__tags_tags_pk_fkey" TO "recipe__labels_labels_pk_fkey""#,
            #"ALTER INDEX "s"."recipe__tags_tags_pk_idx" RENAME TO "recipe__labels_labels_pk_idx""#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
