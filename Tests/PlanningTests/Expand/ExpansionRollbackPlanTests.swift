import Foundation
import Testing
import ObjectModel
@testable import Planning

/// The step back of `rollback`, from two inline versions: its SQL over what the expansion kept,
/// what the old version cannot hold with its codes, and the refusals.
@Suite struct ExpansionRollbackPlanTests {
    static func plan(_ source: String, _ destination: String) throws -> ExpansionRollbackPlan {
        let from = try InferenceFixtures.version(source, name: "v1")
        let to = try InferenceFixtures.version(destination, name: "v2")
        return try ExpansionRollbackPlan(from: to, to: from, store: "s", viewsSchema: "s@v1")
    }

    @Test func aKeptColumnIsMadeRequiredAgainAndWhatV2AddedIsDroppedAndCounted() throws {
        let plan = try Self.plan(
            "Recipe: {attributes: {name: string, code: {type: string, optional: false, default: x}}}",
            "Recipe: {attributes: {title: {type: string, renamingIdentifier: name}, servings: {type: int32, optional: false, default: 2}}}"
        )
        #expect(plan.from == "v2" && plan.to == "v1")
        #expect(plan.statements.map(\.sql.text) == [
            #"DROP SCHEMA IF EXISTS "s@v1" CASCADE"#,
            #"ALTER TABLE "s"."recipe" DROP COLUMN "servings""#,
            #"ALTER TABLE "s"."recipe" RENAME COLUMN "title" TO "name""#,
            #"UPDATE "s"."recipe" SET "code" = 'x' WHERE "code" IS NULL"#,
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "code" SET NOT NULL"#,
        ])
        #expect(plan.losses.map(\.code) == [.rollbackDropsValues])
        #expect(plan.losses.map(\.counting.text) == [
            #"SELECT count(*) AS rows FROM "s"."recipe" WHERE "_entity" IN ('Recipe') AND "servings" IS NOT NULL AND "servings" IS DISTINCT FROM 2"#,
        ])
    }

    @Test func anAddedEntityIsCountedByItsRows() throws {
        let plan = try Self.plan(
            "Recipe: {attributes: {name: string}}",
            "Recipe: {attributes: {name: string}}\nTag: {attributes: {label: string}}"
        )
        #expect(plan.losses.map(\.code) == [.rollbackDropsRows])
        #expect(plan.losses.map(\.counting.text) == [#"SELECT count(*) AS rows FROM "s"."tag" WHERE "_entity" = 'Tag'"#])
    }

    @Test func aToOneMadeToManyCannotGoBack() throws {
        #expect {
            try Self.plan(
                "Recipe: {relationships: {chef: {destination: Chef, inverse: recipes}}}\nChef: {relationships: {recipes: {destination: Recipe, toMany: true, inverse: chef}}}",
                "Recipe: {relationships: {chef: {destination: Chef, toMany: true, inverse: recipes}}}\nChef: {relationships: {recipes: {destination: Recipe, toMany: true, inverse: chef}}}"
            )
        } throws: { error in
            (error as? RollbackRefused)?.reasons.first?.hasPrefix("[rollbackNotInferable] 'v2' -> 'v1': entity Recipe, property chef") == true
        }
    }
}
