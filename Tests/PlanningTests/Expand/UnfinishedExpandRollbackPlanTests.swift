import Testing
import ObjectModel
import SQLBuilding
@testable import Planning

/// The step back of an `apply --expand` stopped before its switch-over, planned from the
/// store's catalog as the run left it (`UnfinishedExpandRollbackPlan`). Integration:
/// `UnfinishedExpandRollbackTests`.
struct UnfinishedExpandRollbackPlanTests {
    static let v1 = "Recipe: {attributes: {name: string, rating: {type: int16, optional: true}}}"
    static let v2 = "Recipe: {attributes: {title: {type: string, renamingIdentifier: name}, rating: {type: int16, optional: false, default: 3}, servings: {type: int32, optional: true}}}"

    static func recipe(_ columns: [String], checks: [SchemaCatalog.Check] = [], indexes: [SchemaCatalog.Index] = []) -> SchemaCatalog.Table {
        SchemaCatalog.Table(
            name: "recipe", columns: columns.map { SchemaCatalog.Column(name: $0, type: "text", isNullable: true) }, primaryKey: ["_pk"], checks: checks, indexes: indexes
        )
    }

    static func plan(_ found: SchemaCatalog.Table, triggers: [OnlineTrigger] = []) throws -> UnfinishedExpandRollbackPlan {
        try UnfinishedExpandRollbackPlan(
            from: InferenceFixtures.version(v2, name: "v2"), to: InferenceFixtures.version(v1, name: "v1"), store: "shop",
            found: SchemaCatalog(tables: [found]), triggers: triggers
        )
    }

    /// (what the run left, the statements after the views' drop, the losses' codes)
    static let cases: [(String, SchemaCatalog.Table, [String], [String])] = [
        ("nothing ran", recipe(["_pk", "_entity", "name", "rating"]), [], []),
        ("the column added", recipe(["_pk", "_entity", "name", "rating", "servings"]),
         [#"ALTER TABLE "shop"."recipe" DROP COLUMN "servings""#], ["rollbackDropsValues"]),
        ("added and renamed", recipe(["_pk", "_entity", "title", "rating", "servings"]),
         [#"ALTER TABLE "shop"."recipe" DROP COLUMN "servings""#, #"ALTER TABLE "shop"."recipe" RENAME COLUMN "title" TO "name""#], ["rollbackDropsValues"]),
        ("an online column of the run", recipe(["_pk", "_entity", "name", "rating", "orchestrator_online_new_1a2b3c4d"]),
         [#"ALTER TABLE "shop"."recipe" DROP COLUMN "orchestrator_online_new_1a2b3c4d""#], []),
        ("a column of the team's own", recipe(["_pk", "_entity", "name", "rating", "audit"]), [], []),
    ]

    @Test(arguments: cases.indices)
    func whatTheRunLeftIsUndoneFromTheCatalog(index: Int) throws {
        let (name, found, statements, losses) = Self.cases[index]
        let plan = try Self.plan(found)
        #expect(plan.statements.first?.sql.text == #"DROP SCHEMA IF EXISTS "shop@v1" CASCADE"#, "\(name)")
        #expect(plan.statements.dropFirst().map(\.sql.text) == statements, "\(name)")
        #expect(plan.losses.map(\.code.rawValue) == losses, "\(name)")
    }

    @Test func theRunsTriggersGoByTheirFunctionsWhereverTheirTableIs() throws {
        let trigger = OnlineTrigger(table: "recipe", name: "orchestrator_online_backfill_1a2b3c4d", log: "orchestrator_online_log_1a2b3c4d")
        let plan = try Self.plan(Self.recipe(["_pk", "_entity", "name", "rating"]), triggers: [trigger, trigger])
        #expect(plan.statements.dropFirst().map(\.sql.text) == [
            #"DROP FUNCTION IF EXISTS "shop"."orchestrator_online_backfill_1a2b3c4d"() CASCADE"#,
            #"DROP TABLE IF EXISTS "shop"."orchestrator_online_log_1a2b3c4d""#,
        ])
    }

    @Test func constraintsOfTheRunAreRenamedBackOrDroppedAndTheTeamsAreLeft() throws {
        let plan = try Self.plan(Self.recipe(["_pk", "_entity", "name", "rating"]))
        let found = SchemaCatalog(tables: [SchemaCatalog.Table(
            name: "recipe", columns: [SchemaCatalog.Column(name: "rating", type: "smallint", isNullable: false, defaultExpression: "3")],
            checks: [SchemaCatalog.Check(name: "orchestrator_online_not_null_1a2b3c4d", definition: "CHECK ((rating IS NOT NULL))"), SchemaCatalog.Check(name: "teams_own", definition: "CHECK (true)")],
            indexes: [SchemaCatalog.Index(name: "recipe_title_idx", isUnique: false, definition: "btree (name)")]
        )])
        let expected = SchemaCatalog(tables: [SchemaCatalog.Table(
            name: "recipe", columns: [SchemaCatalog.Column(name: "rating", type: "smallint", isNullable: true)],
            indexes: [SchemaCatalog.Index(name: "recipe_name_idx", isUnique: false, definition: "btree (name)")]
        )])
        var renamed = plan
        renamed.newNames.insert("recipe_title_idx")
        #expect(renamed.constraints(found: found, expected: expected, store: "shop").map(\.sql.text) == [
            #"ALTER TABLE "shop"."recipe" DROP CONSTRAINT "orchestrator_online_not_null_1a2b3c4d""#,
            #"ALTER INDEX "shop"."recipe_title_idx" RENAME TO "recipe_name_idx""#,
            #"ALTER TABLE "shop"."recipe" ALTER COLUMN "rating" DROP DEFAULT"#,
            #"ALTER TABLE "shop"."recipe" ALTER COLUMN "rating" DROP NOT NULL"#,
        ])
    }

    @Test func aStepRebuildingAColumnBeforeItsSwitchOverIsRefusedWithItsCode() throws {
        let refusal = try #require(throws: RollbackRefused.self) {
            try UnfinishedExpandRollbackPlan(
                from: InferenceFixtures.version("Recipe: {attributes: {rating: int32}}", name: "v2"),
                to: InferenceFixtures.version("Recipe: {attributes: {rating: int16}}", name: "v1"),
                store: "shop", found: SchemaCatalog(), triggers: []
            )
        }
        #expect(refusal.reasons.allSatisfy { $0.hasPrefix("[rollbackUnfinishedNotUndoable]") } && !refusal.reasons.isEmpty, "\(refusal)")
        // status says so without the store's catalog.
        let widened = try UnfinishedExpandRollbackPlan.refusals(
            from: InferenceFixtures.version("Recipe: {attributes: {rating: int32}}", name: "v2"), to: InferenceFixtures.version("Recipe: {attributes: {rating: int16}}", name: "v1"), store: "shop"
        )
        #expect(widened == refusal.reasons)
        #expect(try UnfinishedExpandRollbackPlan.refusals(from: InferenceFixtures.version(Self.v2, name: "v2"), to: InferenceFixtures.version(Self.v1, name: "v1"), store: "shop").isEmpty)
    }
}
