import Testing
@testable import Planning

/// Relationships added, removed, renamed, made to-many, ordered or unordered, given another
/// delete rule or made required.
@Suite struct RelationshipRuleTests {
    typealias M = InlineModels
    static let manyToMany = """
        Recipe: {relationships: {tags: {destination: Tag, inverse: recipes, toMany: true}}}
        Tag: {relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
        """

    static let rows: [RuleCase] = [
        .init("adding a to-one adds its column, foreign key and index", from: "Recipe: {}\nChef: {}", to: M.chefAndRecipes, [
            #"ALTER TABLE "s"."recipe" ADD COLUMN "chef_pk" bigint"#,
            #"ALTER TABLE "s"."recipe" ADD CONSTRAINT "recipe_chef_pk_fkey" FOREIGN KEY ("chef_pk") REFERENCES "s"."chef" ("_pk") ON DELETE SET NULL"#,
            #"CREATE INDEX "recipe_chef_pk_idx" ON "s"."recipe" ("chef_pk")"#,
        ]),
        .init("removing a to-one drops its foreign key, index and column", from: M.chefAndRecipes, to: "Recipe: {}\nChef: {}", [
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "recipe_chef_pk_fkey""#,
            #"DROP INDEX "s"."recipe_chef_pk_idx""#,
            #"ALTER TABLE "s"."recipe" DROP COLUMN "chef_pk""#,
        ]),
        .init("renaming a to-one renames its column, foreign key and index", from: M.chefAndRecipes,
              to: "Recipe: {relationships: {cook: {destination: Chef, inverse: recipes, renamingIdentifier: chef}}}\nChef: {relationships: {recipes: {destination: Recipe, inverse: cook, toMany: true}}}", [
            #"ALTER TABLE "s"."recipe" RENAME COLUMN "chef_pk" TO "cook_pk""#,
            #"ALTER TABLE "s"."recipe" RENAME CONSTRAINT "recipe_chef_pk_fkey" TO "recipe_cook_pk_fkey""#,
            #"ALTER INDEX "s"."recipe_chef_pk_idx" RENAME TO "recipe_cook_pk_idx""#,
        ]),
        .init("changing a delete rule recreates the foreign key", from: M.chefAndRecipes,
              to: M.recipeAndChef(recipe: "destination: Chef, inverse: recipes", chef: "destination: Recipe, inverse: chef, toMany: true, deleteRule: cascade"), [
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "recipe_chef_pk_fkey""#,
            #"ALTER TABLE "s"."recipe" ADD CONSTRAINT "recipe_chef_pk_fkey" FOREIGN KEY ("chef_pk") REFERENCES "s"."chef" ("_pk") ON DELETE CASCADE"#,
        ]),
        .init("making a to-one optional drops NOT NULL", from: M.recipeAndChef(recipe: "destination: Chef, inverse: recipes, optional: false", chef: "destination: Recipe, inverse: chef, toMany: true"),
              to: M.chefAndRecipes, [
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "chef_pk" DROP NOT NULL"#,
        ]),
        .init("making a to-one required checks the rows first, then sets NOT NULL", from: M.chefAndRecipes,
              to: M.recipeAndChef(recipe: "destination: Chef, inverse: recipes, optional: false", chef: "destination: Recipe, inverse: chef, toMany: true"), [
            #"""
            DO $check$
            DECLARE
                offending bigint;
                first_keys text;
            BEGIN
                SELECT count(*) INTO offending FROM (SELECT "_pk" FROM "s"."recipe" WHERE "chef_pk" IS NULL) AS r;
                IF offending > 0 THEN
                    SELECT string_agg(k._pk::text, ', ' ORDER BY k._pk) INTO first_keys FROM (SELECT "_pk" FROM "s"."recipe" WHERE "chef_pk" IS NULL ORDER BY 1 LIMIT 5) AS k;
                    RAISE EXCEPTION USING ERRCODE = 'check_violation',
                        MESSAGE = format('%s rows of recipe without chef_pk (Recipe.chef made required); first _pk: %s', offending, first_keys),
                        HINT = 'give those rows a value, or keep the property optional in this version';
                END IF;
            END
            $check$
            """#,
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "chef_pk" SET NOT NULL"#,
        ]),
        .init("adding a many-to-many creates its join table", from: "Recipe: {}\nTag: {}", to: manyToMany, [
            #"""
            CREATE TABLE "s"."recipe__tags" (
                "recipe_pk" bigint NOT NULL,
                "tags_pk" bigint NOT NULL,
                PRIMARY KEY ("recipe_pk", "tags_pk")
            )
            """#,
            #"ALTER TABLE "s"."recipe__tags" ADD CONSTRAINT "recipe__tags_recipe_pk_fkey" FOREIGN KEY ("recipe_pk") REFERENCES "s"."recipe" ("_pk") ON DELETE CASCADE"#,
            #"ALTER TABLE "s"."recipe__tags" ADD CONSTRAINT "recipe__tags_tags_pk_fkey" FOREIGN KEY ("tags_pk") REFERENCES "s"."tag" ("_pk") ON DELETE CASCADE"#,
            #"CREATE INDEX "recipe__tags_tags_pk_idx" ON "s"."recipe__tags" ("tags_pk")"#,
        ]),
        .init("removing a many-to-many drops its join table", from: manyToMany, to: "Recipe: {}\nTag: {}", [
            #"DROP TABLE "s"."recipe__tags""#,
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
        .init("making a to-one to-many moves the links into a join table", from: M.chefAndRecipes,
              to: M.recipeAndChef(recipe: "destination: Chef, inverse: recipes, toMany: true", chef: "destination: Recipe, inverse: chef, toMany: true"), [
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "recipe_chef_pk_fkey""#,
            #"DROP INDEX "s"."recipe_chef_pk_idx""#,
            #"""
            CREATE TABLE "s"."chef__recipes" (
                "chef_pk" bigint NOT NULL,
                "recipes_pk" bigint NOT NULL,
                PRIMARY KEY ("chef_pk", "recipes_pk")
            )
            """#,
            #"INSERT INTO "s"."chef__recipes" ("chef_pk", "recipes_pk") SELECT "chef_pk", "_pk" FROM "s"."recipe" WHERE "chef_pk" IS NOT NULL"#,
            #"ALTER TABLE "s"."recipe" DROP COLUMN "chef_pk""#,
            #"ALTER TABLE "s"."chef__recipes" ADD CONSTRAINT "chef__recipes_chef_pk_fkey" FOREIGN KEY ("chef_pk") REFERENCES "s"."chef" ("_pk") ON DELETE CASCADE"#,
            #"ALTER TABLE "s"."chef__recipes" ADD CONSTRAINT "chef__recipes_recipes_pk_fkey" FOREIGN KEY ("recipes_pk") REFERENCES "s"."recipe" ("_pk") ON DELETE CASCADE"#,
            #"CREATE INDEX "chef__recipes_recipes_pk_idx" ON "s"."chef__recipes" ("recipes_pk")"#,
        ]),
        .init("making an ordered to-one to-many keeps the order in the join table",
              from: M.recipeAndChef(recipe: "destination: Chef, inverse: recipes", chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true"),
              to: M.recipeAndChef(recipe: "destination: Chef, inverse: recipes, toMany: true", chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true"), [
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "recipe_chef_pk_fkey""#,
            #"DROP INDEX "s"."recipe_chef_pk_idx""#,
            #"""
            CREATE TABLE "s"."chef__recipes" (
                "chef_pk" bigint NOT NULL,
                "recipes_pk" bigint NOT NULL,
                "recipes_order" integer,
                PRIMARY KEY ("chef_pk", "recipes_pk")
            )
            """#,
            #"INSERT INTO "s"."chef__recipes" ("chef_pk", "recipes_pk", "recipes_order") SELECT "chef_pk", "_pk", "chef_order" FROM "s"."recipe" WHERE "chef_pk" IS NOT NULL"#,
            #"ALTER TABLE "s"."recipe" DROP COLUMN "chef_pk""#,
            #"ALTER TABLE "s"."recipe" DROP COLUMN "chef_order""#,
            #"ALTER TABLE "s"."chef__recipes" ADD CONSTRAINT "chef__recipes_chef_pk_fkey" FOREIGN KEY ("chef_pk") REFERENCES "s"."chef" ("_pk") ON DELETE CASCADE"#,
            #"ALTER TABLE "s"."chef__recipes" ADD CONSTRAINT "chef__recipes_recipes_pk_fkey" FOREIGN KEY ("recipes_pk") REFERENCES "s"."recipe" ("_pk") ON DELETE CASCADE"#,
            #"CREATE INDEX "chef__recipes_recipes_pk_idx" ON "s"."chef__recipes" ("recipes_pk")"#,
        ]),
        .init("making a one-to-many ordered numbers each owner's rows by _pk", from: M.chefAndRecipes,
              to: M.recipeAndChef(recipe: "destination: Chef, inverse: recipes", chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true"), [
            #"ALTER TABLE "s"."recipe" ADD COLUMN "chef_order" integer"#,
            #"UPDATE "s"."recipe" AS x SET "chef_order" = o.position FROM (SELECT "_pk", (row_number() OVER (PARTITION BY "chef_pk" ORDER BY "_pk") - 1)::integer AS position FROM "s"."recipe" WHERE "chef_pk" IS NOT NULL ORDER BY "_pk") AS o WHERE x."_pk" = o."_pk""#,
        ]),
        .init("making a one-to-many unordered drops the order column",
              from: M.recipeAndChef(recipe: "destination: Chef, inverse: recipes", chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true"),
              to: M.chefAndRecipes, [
            #"ALTER TABLE "s"."recipe" DROP COLUMN "chef_order""#,
        ]),
        .init("making a many-to-many ordered numbers each owner's links", from: manyToMany,
              to: "Recipe: {relationships: {tags: {destination: Tag, inverse: recipes, toMany: true, ordered: true}}}\nTag: {relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}", [
            #"ALTER TABLE "s"."recipe__tags" ADD COLUMN "tags_order" integer"#,
            #"UPDATE "s"."recipe__tags" AS x SET "tags_order" = o.position FROM (SELECT "recipe_pk", "tags_pk", (row_number() OVER (PARTITION BY "recipe_pk" ORDER BY "tags_pk") - 1)::integer AS position FROM "s"."recipe__tags" WHERE "recipe_pk" IS NOT NULL ORDER BY "recipe_pk", "tags_pk") AS o WHERE x."recipe_pk" = o."recipe_pk" AND x."tags_pk" = o."tags_pk""#,
        ]),
        .init("a rename that changes which side owns a many-to-many copies the links into the new join table", from: manyToMany,
              to: "Treat: {renamingIdentifier: Recipe, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true}}}\nTag: {relationships: {recipes: {destination: Treat, inverse: tags, toMany: true}}}", [
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "recipe_entity_check""#,
            #"ALTER TABLE "s"."recipe" RENAME TO "treat""#,
            #"ALTER TABLE "s"."treat" RENAME CONSTRAINT "recipe_pkey" TO "treat_pkey""#,
            #"ALTER SEQUENCE "s"."recipe__pk_seq" RENAME TO "treat__pk_seq""#,
            #"UPDATE "s"."treat" SET "_entity" = CASE "_entity" WHEN 'Recipe' THEN 'Treat' END WHERE "_entity" IN ('Recipe')"#,
            #"ALTER TABLE "s"."treat" ALTER COLUMN "_entity" SET DEFAULT 'Treat'"#,
            #"""
            CREATE TABLE "s"."tag__recipes" (
                "tag_pk" bigint NOT NULL,
                "recipes_pk" bigint NOT NULL,
                PRIMARY KEY ("tag_pk", "recipes_pk")
            )
            """#,
            #"INSERT INTO "s"."tag__recipes" ("tag_pk", "recipes_pk") SELECT "tags_pk", "recipe_pk" FROM "s"."recipe__tags""#,
            #"DROP TABLE "s"."recipe__tags""#,
            #"ALTER TABLE "s"."treat" ADD CONSTRAINT "treat_entity_check" CHECK ("_entity" IN ('Treat'))"#,
            #"ALTER TABLE "s"."tag__recipes" ADD CONSTRAINT "tag__recipes_tag_pk_fkey" FOREIGN KEY ("tag_pk") REFERENCES "s"."tag" ("_pk") ON DELETE CASCADE"#,
            #"ALTER TABLE "s"."tag__recipes" ADD CONSTRAINT "tag__recipes_recipes_pk_fkey" FOREIGN KEY ("recipes_pk") REFERENCES "s"."treat" ("_pk") ON DELETE CASCADE"#,
            #"CREATE INDEX "tag__recipes_recipes_pk_idx" ON "s"."tag__recipes" ("recipes_pk")"#,
        ]),
        .init("a rename that changes which side holds a one-to-one moves its column",
              from: "Alpha: {relationships: {partner: {destination: Beta, inverse: alpha}}}\nBeta: {relationships: {alpha: {destination: Alpha, inverse: partner}}}",
              to: "Zeta: {renamingIdentifier: Alpha, relationships: {partner: {destination: Beta, inverse: alpha}}}\nBeta: {relationships: {alpha: {destination: Zeta, inverse: partner}}}", [
            #"ALTER TABLE "s"."alpha" DROP CONSTRAINT "alpha_partner_pk_fkey""#,
            #"ALTER TABLE "s"."alpha" DROP CONSTRAINT "alpha_entity_check""#,
            #"DROP INDEX "s"."alpha_partner_pk_idx""#,
            #"ALTER TABLE "s"."alpha" RENAME TO "zeta""#,
            #"ALTER TABLE "s"."zeta" RENAME CONSTRAINT "alpha_pkey" TO "zeta_pkey""#,
            #"ALTER SEQUENCE "s"."alpha__pk_seq" RENAME TO "zeta__pk_seq""#,
            #"UPDATE "s"."zeta" SET "_entity" = CASE "_entity" WHEN 'Alpha' THEN 'Zeta' END WHERE "_entity" IN ('Alpha')"#,
            #"ALTER TABLE "s"."zeta" ALTER COLUMN "_entity" SET DEFAULT 'Zeta'"#,
            #"ALTER TABLE "s"."beta" ADD COLUMN "alpha_pk" bigint"#,
            #"UPDATE "s"."beta" AS x SET "alpha_pk" = l."_pk" FROM "s"."zeta" AS l WHERE x."_pk" = l."partner_pk" AND l."partner_pk" IS NOT NULL"#,
            #"ALTER TABLE "s"."zeta" DROP COLUMN "partner_pk""#,
            #"ALTER TABLE "s"."zeta" ADD CONSTRAINT "zeta_entity_check" CHECK ("_entity" IN ('Zeta'))"#,
            #"ALTER TABLE "s"."beta" ADD CONSTRAINT "beta_alpha_pk_fkey" FOREIGN KEY ("alpha_pk") REFERENCES "s"."zeta" ("_pk") ON DELETE SET NULL"#,
            #"CREATE INDEX "beta_alpha_pk_idx" ON "s"."beta" ("alpha_pk")"#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
