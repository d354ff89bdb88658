import Testing
@testable import Planning

/// The phases `apply --online` runs for a lightweight step, as `plan --online` prints them.
@Suite struct OnlinePlannerTests {
    static func phases(_ source: String, _ destination: String) throws -> [OnlinePhase] {
        let online = try #require(try LightweightFixtures.step(source, destination).phases)
        #expect(online.refusals == [])
        return online.phases
    }

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

    @Test func aToOneMadeToManyMovesItsLinksUnderAMirroringTriggerAndDropsTheColumnAtTheSwitchOver() throws {
        let phases = try Self.phases(
            "Cuisine: {relationships: {recipes: {destination: Recipe, inverse: cuisine, toMany: true}}}\nRecipe: {attributes: {name: string}, relationships: {cuisine: {destination: Cuisine, inverse: recipes}}}",
            "Cuisine: {relationships: {recipes: {destination: Recipe, inverse: cuisines, toMany: true}}}\nRecipe: {attributes: {name: string}, relationships: {cuisines: {destination: Cuisine, inverse: recipes, toMany: true, renamingIdentifier: cuisine}}}"
        )
        let sql = phases.flatMap { $0.statements.map(\.sql.text) + ($0.batches.map { [$0.template.text] } ?? []) }
        #expect(sql.contains { $0.hasPrefix(#"INSERT INTO "s"."cuisine__recipes""#) && $0.hasSuffix(#"AND "_pk" >= :from AND "_pk" < :to FOR SHARE ON CONFLICT DO NOTHING"#) })
        #expect(sql.filter { $0.contains("FOREIGN KEY") }.allSatisfy { $0.hasSuffix("NOT VALID") })
        #expect(sql.filter { $0.contains("VALIDATE CONSTRAINT") }.count == 2)
        #expect(sql.contains(#"CREATE INDEX CONCURRENTLY "cuisine__recipes_recipes_pk_idx" ON "s"."cuisine__recipes" ("recipes_pk")"#))
        #expect(phases.last?.statements.last?.sql.text == #"ALTER TABLE "s"."recipe" DROP COLUMN "cuisine_pk""#)
        #expect(sql.filter { $0.contains(#"DROP COLUMN "cuisine_pk""#) }.count == 1)
        #expect(phases.filter { $0.execution == .outsideTransaction }.allSatisfy { $0.index != nil })
    }

    @Test func aTypeWideningBuildsTheNewColumnBesideTheOldOneAndSwapsItIn() throws {
        let phases = try Self.phases(
            "Recipe: {attributes: {servings: {type: int16, optional: false, default: 1}}}",
            "Recipe: {attributes: {servings: {type: int32, optional: false, default: 1}}}"
        )
        let digest = OnlineTrigger.digest("recipe.servings")
        let (shadow, check) = ("orchestrator_online_new_\(digest)", "orchestrator_online_not_null_\(digest)")
        #expect(phases[0].statements.map(\.sql.text) == [#"ALTER TABLE "s"."recipe" ADD COLUMN "\#(shadow)" integer DEFAULT 1"#])
        #expect(phases[1].installs.map(\.name) == ["orchestrator_online_widen_\(digest)"])
        #expect(phases[2].batches?.template.text == #"UPDATE "s"."recipe" SET "\#(shadow)" = "servings"::integer WHERE TRUE AND "_pk" >= :from AND "_pk" < :to"#)
        #expect(phases[4].statements.map(\.sql.text) == [#"ALTER TABLE "s"."recipe" VALIDATE CONSTRAINT "\#(check)""#])
        #expect(phases[5].removes == phases[1].installs)
        #expect(phases[5].statements.map(\.sql.text).suffix(4) == [
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "\#(shadow)" SET NOT NULL"#,
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "\#(check)""#,
            #"ALTER TABLE "s"."recipe" DROP COLUMN "servings""#,
            #"ALTER TABLE "s"."recipe" RENAME COLUMN "\#(shadow)" TO "servings""#,
        ])
        #expect(phases.last?.statements == [], "the trigger went with the swap; nothing is left for the switch-over")
    }

    @Test func theEntityRenamesTriggerFiresBeforeTheBackfillThatReadsTheNewNames() throws {
        let phases = try Self.phases(
            "Dessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: int16}}",
            "Dessert: {attributes: {name: string}}\nGateau: {parent: Dessert, renamingIdentifier: Cake, attributes: {layers: {type: int16, optional: false, default: 1}}}"
        )
        let triggers = phases.flatMap(\.installs).map(\.name)
        #expect(triggers.count == 2)
        let rename = try #require(triggers.first { $0.contains("_entity_") })
        let backfill = try #require(triggers.first { $0.contains("_backfill_") })
        #expect(rename < backfill, "PostgreSQL fires BEFORE triggers in name order; the backfill reads 'Gateau'")
        #expect(phases.flatMap(\.statements).contains { $0.sql.text.contains(#"NEW."_entity" IN ('Gateau')"#) })
    }
}
