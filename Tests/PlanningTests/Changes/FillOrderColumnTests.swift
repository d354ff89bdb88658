import Testing
@testable import Planning

/// Positions numbered across rows under `apply --online`: a trigger logs the owners of the links
/// written, batches number every owner by ranges of its keys, then the logged ones again, and the
/// switch-over numbers those logged last.
/// The change: Planning/Changes/FillOrderColumn.swift.
@Suite struct FillOrderColumnTests: OnlineStepFixtures, RuleRows {
    @Test func aToManyMadeOrderedIsNumberedByOwnerRangesThenForTheOwnersLoggedAndLastInTheSwitchOver() throws {
        let phases = try Self.phases(Self.cuisines(ordered: false), Self.cuisines(ordered: true))
        let digest = OnlineTrigger.digest("recipe.cuisine_order")
        let (trigger, log) = ("orchestrator_online_positions_\(digest)", "orchestrator_online_owners_\(digest)")
        let install = try #require(phases.first { $0.installs.first?.name == trigger })
        #expect(install.statements.first?.sql.text == #"CREATE TABLE IF NOT EXISTS "s"."\#(log)" ("_pk" bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "owner_pk" bigint NOT NULL)"#)
        let function = try #require(install.statements.first { $0.sql.text.hasPrefix("CREATE OR REPLACE FUNCTION") }).sql.text
        #expect(function.contains(#"IF TG_OP = 'UPDATE' AND OLD."cuisine_pk" IS NOT DISTINCT FROM NEW."cuisine_pk" AND OLD."_pk" IS NOT DISTINCT FROM NEW."_pk" THEN"#))
        #expect(function.contains(#"INSERT INTO "s"."\#(log)" ("owner_pk") VALUES (OLD."cuisine_pk");"#), "the owner a link leaves")
        #expect(function.contains(#"NEW."cuisine_order" := NULL;"#), "a link left without owner has no position, as offline")
        #expect(install.statements.last?.sql.text.contains("BEFORE INSERT OR UPDATE OR DELETE ON \"s\".\"recipe\"") == true)

        let batches = phases.compactMap(\.batches)
        #expect(batches.map(\.table) == ["cuisine", log, log], "owners walked by their keys, then the log, twice")
        let numbered = #"UPDATE "s"."recipe" AS x SET "cuisine_order" = o.position FROM (SELECT "_pk", (row_number() OVER (PARTITION BY "cuisine_pk" ORDER BY "_pk") - 1)::integer AS position FROM "s"."recipe" WHERE "#
        let matched = #") AS o WHERE x."_pk" = o."_pk" AND x."cuisine_order" IS DISTINCT FROM o.position"#
        #expect(batches[0].template.text == numbered + #""cuisine_pk" IS NOT NULL AND "cuisine_pk" >= :from AND "cuisine_pk" < :to"# + matched + #" AND x."cuisine_pk" >= :from AND x."cuisine_pk" < :to"#)
        #expect(batches[0].sql(from: 8, below: 15).text.hasSuffix(#"AND x."cuisine_pk" >= 8 AND x."cuisine_pk" < 15"#))
        // The rows updated restricted to the logged owners too, so both sides are read through the owner index.
        let again = numbered + #""cuisine_pk" IN (SELECT "owner_pk" FROM taken)"# + matched + #" AND x."cuisine_pk" IN (SELECT "owner_pk" FROM taken)"#
        #expect(batches[1].template.text == #"WITH taken AS (DELETE FROM "s"."\#(log)" WHERE "owner_pk" IS NOT NULL AND "_pk" >= :from AND "_pk" < :to RETURNING "owner_pk") "# + again)
        #expect(phases.filter { $0.execution == .batches }.allSatisfy { $0.lock == .rowExclusive && $0.hold == .batch })

        let switchOver = try #require(phases.last).statements.map(\.sql.text)
        #expect(switchOver == [
            #"DROP TRIGGER IF EXISTS "\#(trigger)" ON "s"."recipe""#,
            #"DROP FUNCTION IF EXISTS "s"."\#(trigger)"()"#,
            #"WITH taken AS (DELETE FROM "s"."\#(log)" RETURNING "owner_pk") "# + again,
            #"DROP TABLE IF EXISTS "s"."\#(log)""#,
        ], "the trigger goes first: its lock keeps writes out until the last owners are numbered")
    }

    @Test func aManyToManyMadeOrderedNumbersTheJoinTableByItsOwnersKeys() throws {
        let tags = { (ordered: Bool) in
            """
            Recipe: {attributes: {name: string}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true, ordered: \(ordered)}}}
            Tag: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
            """
        }
        let phases = try Self.phases(tags(false), tags(true))
        let numbering = try #require(phases.compactMap(\.batches).first)
        #expect(numbering.table == "recipe")
        #expect(numbering.template.text.contains(#"(SELECT "recipe_pk", "tags_pk", (row_number() OVER (PARTITION BY "recipe_pk" ORDER BY "tags_pk") - 1)::integer AS position FROM "s"."recipe__tags" WHERE "recipe_pk" IS NOT NULL AND "recipe_pk" >= :from"#), "\(numbering.template.text)")
        #expect(numbering.template.text.hasSuffix(#"WHERE x."recipe_pk" = o."recipe_pk" AND x."tags_pk" = o."tags_pk" AND x."tags_order" IS DISTINCT FROM o.position AND x."recipe_pk" >= :from AND x."recipe_pk" < :to"#))
    }

    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("making a one-to-many ordered numbers each owner's rows by _pk", from: M.chefAndRecipes,
              to: M.recipeAndChef(recipe: "destination: Chef, inverse: recipes", chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true"), [
            #"ALTER TABLE "s"."recipe" ADD COLUMN "chef_order" integer"#,
            #"UPDATE "s"."recipe" AS x SET "chef_order" = o.position FROM (SELECT "_pk", (row_number() OVER (PARTITION BY "chef_pk" ORDER BY "_pk") - 1)::integer AS position FROM "s"."recipe" WHERE "chef_pk" IS NOT NULL ORDER BY "_pk") AS o WHERE x."_pk" = o."_pk""#,
        ]),
        .init("making a many-to-many ordered numbers each owner's links", from: manyToMany,
              to: "Recipe: {relationships: {tags: {destination: Tag, inverse: recipes, toMany: true, ordered: true}}}\nTag: {relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}", [
            #"ALTER TABLE "s"."recipe__tags" ADD COLUMN "tags_order" integer"#,
            #"UPDATE "s"."recipe__tags" AS x SET "tags_order" = o.position FROM (SELECT "recipe_pk", "tags_pk", (row_number() OVER (PARTITION BY "recipe_pk" ORDER BY "tags_pk") - 1)::integer AS position FROM "s"."recipe__tags" WHERE "recipe_pk" IS NOT NULL ORDER BY "recipe_pk", "tags_pk") AS o WHERE x."recipe_pk" = o."recipe_pk" AND x."tags_pk" = o."tags_pk""#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
