import Testing
@testable import Planning

/// Attributes added, removed, renamed, made optional or required, widened, given a new default.
@Suite struct AttributeRuleTests {
    typealias M = InlineModels

    static let rows: [RuleCase] = [
        .init("adding an optional attribute adds a nullable column", from: M.recipe, to: M.recipe("name: string, notes: string"), [
            #"ALTER TABLE "s"."recipe" ADD COLUMN "notes" text"#,
        ]),
        .init("adding a non-optional attribute with a default adds it NOT NULL with the default at once", from: M.recipe,
              to: M.recipe("name: string, rating: {type: int16, optional: false, default: 0}"), [
            #"ALTER TABLE "s"."recipe" ADD COLUMN "rating" smallint NOT NULL DEFAULT 0"#,
        ]),
        .init("adding an optional attribute with a default gives existing rows the default", from: M.recipe,
              to: M.recipe("name: string, servings: {type: int32, default: 2}"), [
            #"ALTER TABLE "s"."recipe" ADD COLUMN "servings" integer DEFAULT 2"#,
        ]),
        .init("removing an attribute drops its column", from: M.recipe("name: string, notes: string"), to: M.recipe, [
            #"ALTER TABLE "s"."recipe" DROP COLUMN "notes""#,
        ]),
        .init("renaming an attribute renames its column", from: M.recipe, to: M.recipe("title: {type: string, renamingIdentifier: name}"), [
            #"ALTER TABLE "s"."recipe" RENAME COLUMN "name" TO "title""#,
        ]),
        .init("renaming an attribute renames the indexes and uniqueness constraints over it",
              from: "Recipe: {attributes: {name: string, code: string}, uniquenessConstraints: [[code]], indexes: {byName: [name]}}",
              to: "Recipe: {attributes: {title: {type: string, renamingIdentifier: name}, reference: {type: string, renamingIdentifier: code}}, uniquenessConstraints: [[reference]], indexes: {byName: [title]}}", [
            #"ALTER TABLE "s"."recipe" RENAME COLUMN "name" TO "title""#,
            #"ALTER TABLE "s"."recipe" RENAME COLUMN "code" TO "reference""#,
            #"ALTER TABLE "s"."recipe" RENAME CONSTRAINT "recipe_code_key" TO "recipe_reference_key""#,
        ]),
        .init("making an attribute optional drops NOT NULL", from: M.recipe("name: {type: string, optional: false}"), to: M.recipe, [
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "name" DROP NOT NULL"#,
        ]),
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
        .init("changing a default changes the column default only", from: M.recipe("rating: {type: int16, default: 0}"), to: M.recipe("rating: {type: int16, default: 1}"), [
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "rating" SET DEFAULT 1"#,
        ]),
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
        .init("making a stored attribute transient drops its column", from: M.recipe("name: string, notes: string"),
              to: M.recipe("name: string, notes: {type: string, transient: true}"), [
            #"ALTER TABLE "s"."recipe" DROP COLUMN "notes""#,
        ]),
    ]

    /// A data pre-check (its whole text: RelationshipRuleTests) as `check <table>: <rows>: <problem>`.
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
