import Testing
import Mapping
import ObjectModel
@testable import Planning

/// `Planner.plan(…, mode: .expand)`: the lightweight step online with its lossy drops deferred
/// to `complete`, its renames and the old version's views in the switch-over's transaction.
@Suite struct ExpandPlanningTests {
    typealias P = PlanModeTests

    static func model(_ v1: String, _ v2: String) throws -> VersionedModel {
        let versions = [try InferenceFixtures.version(v1, name: "v1"), try InferenceFixtures.version(v2, name: "v2")]
        return VersionedModel(name: "Recipes", versions: versions, currentVersionName: "v2", path: "recipes", format: .native)
    }

    @Test func removedColumnsAreDeferredAndRenamesRunWithTheViewsInTheSwitchOver() throws {
        let model = try Self.model(
            "Recipe: {attributes: {name: string, rating: int16, note: {type: string, optional: false, default: x}}}",
            "Recipe: {attributes: {title: {type: string, renamingIdentifier: name}, rating: int16, servings: {type: int32, optional: false, default: 2}}}"
        )
        let plan = try P.plan(model, mode: .expand)
        #expect(plan.blockerDetails.isEmpty)
        let online = try #require(plan.steps.first?.phases)
        let expansion = try #require(online.expansion)
        #expect(expansion.viewsSchema == "s@v1" && expansion.oldVersion == "v1" && expansion.newVersion == "v2")
        #expect(expansion.deferred.map(\.sql.text) == [#"ALTER TABLE "s"."recipe" DROP COLUMN "note""#])
        let texts = online.phases.map { $0.statements.map(\.sql.text) }
        // The kept column stops refusing the new release's rows first; nothing drops it before complete.
        #expect(texts.first == [#"ALTER TABLE "s"."recipe" ALTER COLUMN "note" DROP NOT NULL"#])
        #expect(!texts.joined().contains { $0.contains("DROP COLUMN") })
        let switchOver = try #require(texts.last)
        let rename = try #require(switchOver.firstIndex { $0.contains(#"RENAME COLUMN "name" TO "title""#) })
        let views = try #require(switchOver.firstIndex { $0 == #"CREATE SCHEMA "s@v1""# })
        #expect(rename < views)
        #expect(!texts.dropLast().joined().contains { $0.contains(" RENAME ") })
        #expect(try P.plan(model, mode: .online).steps.first?.phases?.expansion == nil)
    }

    /// A drop the step keeps (an ordered one-to-many made unordered drops its order column)
    /// runs in the switch-over, before the views: no phase leaves the old release without it.
    @Test func aDropTheStepKeepsRunsInTheSwitchOver() throws {
        let model = try Self.model(
            "Recipe: {attributes: {name: string}, relationships: {chef: {destination: Chef, inverse: recipes}}}\nChef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true, ordered: true}}}",
            "Recipe: {attributes: {name: string}, relationships: {chef: {destination: Chef, inverse: recipes}}}\nChef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true}}}"
        )
        let online = try #require(try P.plan(model, mode: .expand).steps.first?.phases)
        let texts = online.phases.map { $0.statements.map(\.sql.text) }
        #expect(texts.count == 1, "\(texts)")
        let switchOver = try #require(texts.last)
        let drop = try #require(switchOver.firstIndex(of: #"ALTER TABLE "s"."recipe" DROP COLUMN "chef_order""#), "\(switchOver)")
        #expect(drop < (switchOver.firstIndex(of: #"CREATE SCHEMA "s@v1""#) ?? 0))
        #expect(try P.plan(model, mode: .online).steps.first?.phases?.phases.count == 2)
    }

    /// A rename a backfill follows stays in its phase: plain views of the old tables come
    /// before it, and the switch-over drops them first.
    @Test func aRenameABackfillFollowsGetsPlainViewsBeforeIt() throws {
        let model = try Self.model(
            "Recipe: {attributes: {name: string, rating: {type: int16, optional: true}}}",
            "Recipe: {attributes: {title: {type: string, renamingIdentifier: name}, rating: {type: int16, optional: false, default: 3}}}"
        )
        let online = try #require(try P.plan(model, mode: .expand).steps.first?.phases)
        let texts = online.phases.map { $0.statements.map(\.sql.text) }
        let early = try #require(texts.firstIndex { $0.first == #"CREATE SCHEMA "s@v1""# })
        let rename = try #require(texts.firstIndex { $0.contains { $0.contains(" RENAME ") } })
        #expect(early + 1 == rename && rename < texts.count - 1, "\(texts)")
        #expect(texts[early].last == #"CREATE VIEW "s@v1"."recipe" AS SELECT "_pk", "_entity", "name", "rating" FROM "s"."recipe""#)
        #expect(texts.last?.first == #"DROP SCHEMA "s@v1" CASCADE"#)
        #expect(texts.last?.filter { $0 == #"CREATE SCHEMA "s@v1""# }.count == 1)
    }

    /// An entity renamed: its rows' `_entity` is rewritten before the switch-over, so the views
    /// come first; its table's view reads the old names over a plain view, with a trigger.
    @Test func anEntityRenamedGetsTheViewsBeforeItsRowsAreRenamed() throws {
        let model = try Self.model(
            "Dessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: int16}}",
            "Dessert: {attributes: {name: string}}\nGateau: {renamingIdentifier: Cake, parent: Dessert, attributes: {layers: int16}}"
        )
        let online = try #require(try P.plan(model, mode: .expand).steps.first?.phases)
        let texts = online.phases.map { $0.statements.map(\.sql.text) }
        let early = try #require(texts.firstIndex { $0.first == #"CREATE SCHEMA "s@v1""# })
        let renaming = try #require(texts.firstIndex { $0.contains { $0.contains(#"NEW."_entity" := CASE"#) } })
        #expect(early < renaming, "\(texts)")
        #expect(texts[early].contains(#"CREATE VIEW "s@v1"."dessert~rows" AS SELECT "_pk", "_entity", "name", "layers" FROM "s"."dessert""#))
        #expect(texts[early].contains { $0.hasPrefix(#"CREATE VIEW "s@v1"."dessert" AS SELECT t."_pk" AS "_pk", CASE t."_entity" WHEN 'Gateau' THEN 'Cake'"#) && $0.contains(#"FROM "s@v1"."dessert~rows" AS t"#) }, "\(texts[early])")
        #expect(texts[early].contains { $0.hasPrefix("DO $early$") && $0.contains(#"pg_get_serial_sequence('"s"."dessert"', '_pk')"#) })
        #expect(texts.last?.first == #"DROP SCHEMA "s@v1" CASCADE"#)
    }

    /// A removed hierarchy (an abstract root and its two entities) and its many-to-many: the
    /// tables stay until `complete`, which drops them; the plan names the loss as without
    /// `--expand`; the old version's views read the kept tables, every row.
    @Test func aRemovedEntitysTableIsKeptUntilCompleteAndServedAsItIs() throws {
        let model = try Self.model(
            "Recipe: {attributes: {name: string}, relationships: {tools: {destination: Tool, inverse: recipes, toMany: true}}}\nTool: {abstract: true, attributes: {label: string}, relationships: {recipes: {destination: Recipe, inverse: tools, toMany: true}}}\nKnife: {parent: Tool, attributes: {edge: int16}}\nPan: {parent: Tool, attributes: {size: int16}}",
            "Recipe: {attributes: {name: string}}"
        )
        let plan = try P.plan(model, mode: .expand)
        #expect(plan.blockerDetails.isEmpty, "\(plan.blockers)")
        let step = try #require(plan.steps.first)
        #expect(step.hazards.map(\.code) == (try P.plan(model, mode: .offline)).steps.first?.hazards.map(\.code))
        #expect(step.hazards.contains { $0.message.contains("Knife") || $0.message.contains("tool") }, "\(step.hazards)")
        let online = try #require(step.phases)
        let expansion = try #require(online.expansion)
        #expect(expansion.deferred.map(\.sql.text).contains { $0.hasPrefix("DROP TABLE") && $0.contains(#""s"."tool""#) && $0.contains("__") })
        let texts = online.phases.flatMap { $0.statements.map(\.sql.text) }
        #expect(!texts.contains { $0.contains("DROP TABLE") })
        #expect(texts.contains(#"CREATE VIEW "s@v1"."tool" AS SELECT t."_pk" AS "_pk", t."_entity" AS "_entity", t."label" AS "label", t."edge" AS "edge", t."size" AS "size" FROM "s"."tool" AS t"#), "\(texts)")
    }

    @Test func aHeavyweightStepIsTheOnlineOneWaitingForCompleteItsNewVersionServedReadOnlyOverTheStagingTables() throws {
        let plan = try Planner.plan(
            model: StoreSurroundingsTests.model, snapshot: PlanModeTests.kitchenSnapshot(), explicitMappings: [StoreSurroundingsTests.mapping], mode: .expand
        )
        #expect(plan.blockerDetails.isEmpty, "\(plan.blockers)")
        let work = try #require(plan.steps.first?.staged)
        #expect(work.runsOnline)
        #expect(work.phases.map(\.kind).contains(.waitToSwitchOver))
        let views = try #require(work.newVersionViews)
        #expect(views.schema == "shop@Kitchen_2" && views.oldVersion == "Kitchen 1" && views.version == "Kitchen 2")
        let texts = views.statements.map(\.text)
        #expect(texts.contains(#"CREATE VIEW "shop@Kitchen_2"."recipe" AS SELECT "_pk", "_entity", "name", "total_cost", "temperature_c", "author_pk" FROM "shop~staging"."recipe""#), "\(texts)")
        #expect(texts.contains { $0.hasPrefix(#"CREATE TRIGGER "read_only" BEFORE INSERT OR UPDATE OR DELETE ON "shop@Kitchen_2"."recipe" FOR EACH STATEMENT"#) })
        #expect(texts.contains { $0.hasPrefix(#"CREATE TRIGGER "read_only_row" INSTEAD OF INSERT OR UPDATE OR DELETE ON "shop@Kitchen_2"."chef" FOR EACH ROW"#) })
        #expect(texts.contains { $0.contains("read_only_sql_transaction") && $0.contains("served read-only in \"shop@Kitchen_2\" until orchestrator complete --store shop") })
        // The online plan of the same step has no views.
        let online = try Planner.plan(
            model: StoreSurroundingsTests.model, snapshot: PlanModeTests.kitchenSnapshot(), explicitMappings: [StoreSurroundingsTests.mapping], mode: .online
        )
        #expect(online.steps.first?.staged?.newVersionViews == nil)
    }

    /// An `apply --expand` of a heavyweight step stopped while it waited for `complete` is
    /// continued by `apply --expand`; every other mode stays refused until `complete`.
    @Test func aHeavyweightExpansionInFlightIsContinuedByApplyExpandOnly() throws {
        var snapshot = PlanModeTests.kitchenSnapshot()
        snapshot.surroundings.expansionInFlight = ExpansionInFlight(oldVersion: "Kitchen 1", newVersion: "Kitchen 2", viewsSchema: "shop@Kitchen_2")
        for mode in [PlanMode.offline, .online, .expand] {
            let plan = try Planner.plan(model: StoreSurroundingsTests.model, snapshot: snapshot, explicitMappings: [StoreSurroundingsTests.mapping], mode: mode)
            #expect(plan.blockerDetails.map(\.code) == (mode == .expand ? [] : [.expandInFlight]), "\(mode): \(plan.blockers)")
        }
    }

    @Test func aStoreServingTwoVersionsBlocksEveryMigrationUntilComplete() throws {
        let model = try PlanModeTests.recipes()
        var surroundings = StoreSurroundings()
        surroundings.expansionInFlight = ExpansionInFlight(oldVersion: "v0", newVersion: "v1", viewsSchema: "s@v0")
        for mode in [PlanMode.offline, .online, .expand] {
            let plan = try P.plan(model, mode: mode, surroundings: surroundings)
            #expect(plan.blockerDetails.map(\.code) == [.expandInFlight], "\(mode)")
            #expect(plan.blockers.first?.contains("run orchestrator complete --store s first") == true)
        }
    }
}
