import Testing
@testable import Planning

/// NULLs of a column made required filled with its default, before NOT NULL or a scoped check.
/// The change: Planning/Changes/BackfillNulls.swift.
@Suite struct BackfillNullsTests: RuleRows {
    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("making an attribute non-optional with a default backfills NULLs, then sets NOT NULL", from: M.recipe("rating: int16"),
              to: M.recipe("rating: {type: int16, optional: false, default: 0}"), [
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "rating" SET DEFAULT 0"#,
            #"UPDATE "s"."recipe" SET "rating" = 0 WHERE "rating" IS NULL"#,
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "rating" SET NOT NULL"#,
        ]),
        .init("making a sub-entity's attribute non-optional backfills its rows, then adds a scoped check", from: M.animals,
              to: "Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {bark: {type: string, optional: false, default: woof}}}", [
            #"ALTER TABLE "s"."animal" ALTER COLUMN "bark" SET DEFAULT 'woof'"#,
            #"UPDATE "s"."animal" SET "bark" = 'woof' WHERE "bark" IS NULL AND "_entity" IN ('Dog')"#,
            #"ALTER TABLE "s"."animal" ADD CONSTRAINT "animal_bark_required" CHECK ("_entity" NOT IN ('Dog') OR "bark" IS NOT NULL)"#,
        ]),
        .init("moving a required property up a hierarchy backfills the rows that lacked it",
              from: "Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {legs: {type: int16, optional: false, default: 4}}}",
              to: "Animal: {attributes: {name: string, legs: {type: int16, optional: false, default: 4}}}\nDog: {parent: Animal}", [
            #"ALTER TABLE "s"."animal" DROP CONSTRAINT "animal_legs_required""#,
            #"UPDATE "s"."animal" SET "legs" = 4 WHERE "legs" IS NULL"#,
            #"ALTER TABLE "s"."animal" ALTER COLUMN "legs" SET NOT NULL"#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
