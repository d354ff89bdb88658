import Testing
@testable import Planning

/// A column's type widened under `apply --online`: built beside the old one and swapped in (what
/// covers it: OnlineCoveringConstraintsTests).
/// The change: Planning/Changes/AlterColumnType.swift.
@Suite struct AlterColumnTypeTests: OnlineStepFixtures {
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
}
