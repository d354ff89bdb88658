import Testing
@testable import Planning

/// A property made required under `apply --online`: its NULLs backfilled (`BackfillNulls`), then
/// NOT NULL set through a validated check.
/// The change: Planning/Changes/SetNotNull.swift.
@Suite struct SetNotNullTests: OnlineStepFixtures, RuleRows {
    @Test func aPropertyMadeRequiredIsBackfilledInBatchesThenMadeNotNullThroughAValidatedCheck() throws {
        let phases = try Self.phases(
            "Recipe: {attributes: {name: string, rating: int16}}",
            "Recipe: {attributes: {name: string, rating: {type: int16, optional: false, default: 0}}}"
        )
        #expect(phases.map(\.execution) == [.transaction, .transaction, .batches, .transaction, .transaction, .transaction, .transaction])
        #expect(phases[1].installs.map(\.name) == ["orchestrator_online_backfill_\(OnlineTrigger.digest("recipe.rating"))"])
        #expect(phases[2].batches?.template.text == #"UPDATE "s"."recipe" SET "rating" = 0 WHERE "rating" IS NULL AND "_pk" >= :from AND "_pk" < :to"#)
        #expect(phases[2].lock == .rowExclusive && phases[2].hold == .batch)
        let check = "orchestrator_online_not_null_\(OnlineTrigger.digest("recipe.rating"))"
        #expect(phases[3].statements.map(\.sql.text) == [#"ALTER TABLE "s"."recipe" ADD CONSTRAINT "\#(check)" CHECK ("rating" IS NOT NULL) NOT VALID"#])
        #expect(phases[4].statements.map(\.sql.text) == [#"ALTER TABLE "s"."recipe" VALIDATE CONSTRAINT "\#(check)""#])
        #expect(phases[4].lock == .shareUpdateExclusive && phases[4].hold == .scan)
        #expect(phases[5].statements.map(\.sql.text) == [
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "rating" SET NOT NULL"#,
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "\#(check)""#,
        ])
        let trigger = phases[1].installs[0].name
        #expect(phases[6].statements.map(\.sql.text) == [
            #"DROP TRIGGER IF EXISTS "\#(trigger)" ON "s"."recipe""#,
            #"DROP FUNCTION IF EXISTS "s"."\#(trigger)"()"#,
        ])
    }

    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
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
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
