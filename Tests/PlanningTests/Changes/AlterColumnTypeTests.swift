import Testing
@testable import Planning

/// A column's type widened under `apply --online`: built beside the old one and swapped in (what
/// covers it: OnlineCoveringConstraintsTests).
/// The change: Planning/Changes/AlterColumnType.swift.
@Suite struct AlterColumnTypeTests: OnlineStepFixtures, RuleRows {
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

    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("widening Integer 16 to Integer 32 alters the column type", from: M.recipe("n: int16"), to: M.recipe("n: int32"), [
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "n" TYPE integer"#,
        ]),
        .init("widening Integer 32 to Integer 64 alters the column type", from: M.recipe("n: int32"), to: M.recipe("n: int64"), [
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "n" TYPE bigint"#,
        ]),
        .init("widening Float to Double alters the column type", from: M.recipe("n: float"), to: M.recipe("n: double"), [
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "n" TYPE double precision"#,
        ]),
        .init("widening an integer to Decimal alters the column type and its default", from: M.recipe("n: {type: int64, default: 3}"), to: M.recipe("n: {type: decimal, default: 3}"), [
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "n" TYPE numeric"#,
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "n" SET DEFAULT '3'::numeric"#,
        ]),
        .init("changing Boolean to an integer converts false and true to 0 and 1, the default dropped first and set after",
              from: M.recipe("isSilenced: {type: boolean, default: NO}"), to: M.recipe("mutedStatus: {type: int16, default: 0, renamingIdentifier: isSilenced}"), [
            #"ALTER TABLE "s"."recipe" RENAME COLUMN "is_silenced" TO "muted_status""#,
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "muted_status" DROP DEFAULT"#,
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "muted_status" TYPE smallint USING "muted_status"::integer::smallint"#,
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "muted_status" SET DEFAULT 0"#,
        ]),
        .init("changing Boolean without a default to Integer 32 drops no default", from: M.recipe("flag: boolean"), to: M.recipe("flag: int32"), [
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "flag" TYPE integer USING "flag"::integer"#,
        ]),
        .init("narrowing a renamed integer checks the old column's values first, then alters the renamed column",
              from: M.recipe("servings: int64"), to: M.recipe("portions: {type: int16, renamingIdentifier: servings}"), [
            typeCheck(where: #"NOT ("servings" >= -32768 AND "servings" < 32768)"#, "rows of recipe whose servings does not fit Integer 16 (Recipe.portions changed from Integer 64; integers from -32768 to 32767 fit)"),
            #"ALTER TABLE "s"."recipe" RENAME COLUMN "servings" TO "portions""#,
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "portions" TYPE smallint"#,
        ]),
        .init("changing an integer to Boolean turns 0 and 1 into false and true", from: M.recipe("n: int32"), to: M.recipe("n: boolean"), [
            typeCheck(where: #""n" NOT IN (0, 1)"#, "rows of recipe whose n does not fit Boolean (Recipe.n changed from Integer 32; only 0 and 1 fit)"),
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "n" TYPE boolean USING "n" <> 0"#,
        ]),
        .init("changing Double to Decimal prints the doubles shortest, checks for NaN and infinity, then converts their text",
              from: M.recipe("n: double"), to: M.recipe("n: decimal"), [
            "SET LOCAL extra_float_digits = 1",
            typeCheck(where: #""n" IN ('NaN', 'Infinity', '-Infinity')"#, "rows of recipe whose n does not fit Decimal (Recipe.n changed from Double; finite numbers fit, not NaN or infinity)"),
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "n" TYPE numeric USING "n"::text::numeric"#,
        ]),
        .init("changing a sub-entity's attribute type alters the hierarchy table's column",
              from: "Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {legs: boolean}}",
              to: "Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {legs: int32}}", [
            #"ALTER TABLE "s"."animal" ALTER COLUMN "legs" TYPE integer USING "legs"::integer"#,
        ]),
    ]

    /// A data pre-check (its whole text: SetNotNullTests) as `check <table>: <rows>: <problem>`.
    static func typeCheck(where condition: String, _ problem: String) -> String {
        "check recipe: \(condition): \(problem)"
    }

    static func compact(_ statement: String) -> String {
        guard statement.hasPrefix("DO $check$"),
              let rows = statement.firstMatch(of: /FROM \(SELECT "_pk" FROM "s"\."(\w+)" WHERE (.*?)\) AS r;/),
              let message = statement.firstMatch(of: /MESSAGE = format\('%s (.*); first _pk: %s'/) else { return statement }
        return "check \(rows.1): \(rows.2): \(message.1)"
    }

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination).map(Self.compact) == row.expected)
    }
}
