import Testing
import Mapping
import ObjectModel
@testable import Planning

/// The catch-up round of an online heavyweight step, pinned as exact text: the rows made from
/// the logged keys go, then stage 1 and stage 2 run again restricted to those keys.
@Suite struct OnlineCatchUpTests {
    typealias Kitchen = HeavyweightMigrationTests

    static func statements(_ step: PlannedStep) -> [String] {
        (step.staged?.catchUp?.round ?? []).compactMap { part in
            if case .statement(let statement) = part { return statement.sql.text }
            return nil
        }
    }

    @Test func rowsKeepingTheirKeysAreDeletedAndInsertedAgainForTheLoggedKeysOnly() throws {
        let step = try Kitchen.step()
        #expect(step.staged?.refusal == nil)
        #expect(Self.statements(step) == [
            """
            DELETE FROM "shop~staging"."chef" AS d
            WHERE d._entity = 'Chef' AND d._pk IN (SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = 'chef')
            """,
            """
            DELETE FROM "shop~staging"."recipe" AS d
            WHERE d._entity = 'Recipe' AND d._pk IN (SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = 'recipe')
            """,
            """
            INSERT INTO "shop~staging"."chef" ("_pk", "_entity", "name")
            SELECT s._pk, 'Chef', "s"."name"
            FROM "shop"."chef" AS s
            WHERE "s"."_entity" IN ('Chef') AND s._pk IN (SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = 'chef')
            """,
            """
            INSERT INTO "shop~staging"."recipe" ("_pk", "_entity", "name", "total_cost", "temperature_c", "author_pk")
            SELECT s._pk, 'Recipe', "s"."name", "s"."amount", (("s"."temperature" - 32.0) / 1.8), "s"."chef_pk"
            FROM "shop"."recipe" AS s
            WHERE "s"."_entity" IN ('Recipe') AND ("s"."amount" > 100) AND s._pk IN (SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = 'recipe')
            """,
        ])
        // Under the write guard, the kept keys' sequences move past the rows written meanwhile.
        #expect(step.staged?.catchUp?.keySequences.map(\.summary) == [
            "keys of shop~staging.chef after those kept from shop.chef", "keys of shop~staging.recipe after those kept from shop.recipe",
        ])
        // One row trigger per old table, logging into the staging schema.
        #expect(step.staged?.catchUp?.install.last?.sql.text == """
            CREATE TRIGGER "_orchestrator_row" AFTER INSERT OR UPDATE OR DELETE ON "shop"."recipe" FOR EACH ROW EXECUTE FUNCTION "shop~staging"."_record_row_change"()
            """)
    }

    @Test func rowsWithNewKeysKeepTheirAssociationWhileTheSourceRowPassesTheFilter() throws {
        // Chefs made from chefs and from recipes: the chef table cannot keep source keys.
        var shared = Kitchen.mapping
        shared.entityMappings.append(EntityMappingDefinition(
            name: "RecipeToChef", type: .transform, sourceEntity: "Recipe", destinationEntity: "Chef",
            attributeMappings: [PropertyMappingDefinition(name: "name", valueExpression: "$source.name")]
        ))
        let statements = Self.statements(try Kitchen.step(shared))
        #expect(statements.contains("""
            DELETE FROM "shop~staging"."chef" AS d USING "shop~staging"."_association_rows" AS a
            WHERE a.entity_mapping = 'ChefToChef' AND a.destination_pk = d._pk AND a.source_pk IN (SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = 'chef')
            """))
        #expect(statements.contains("""
            DELETE FROM "shop~staging"."_association_rows" AS a
            WHERE a.entity_mapping = 'RecipeToChef' AND a.source_pk IN (SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = 'recipe')
              AND NOT EXISTS (SELECT 1 FROM "shop"."recipe" AS s WHERE s._pk = a.source_pk AND "s"."_entity" IN ('Recipe'))
            """))
        // New source rows only get a new key; those associated keep theirs.
        #expect(statements.contains { $0.hasPrefix(#"INSERT INTO "shop~staging"."_association_rows""#)
            && $0.contains(#"AND NOT EXISTS (SELECT 1 FROM "shop~staging"."_association_rows" AS x WHERE x.entity_mapping = 'ChefToChef' AND x.source_pk = s._pk)"#) })

        let streamed = try HeavyweightMigration.step(
            mapping: Kitchen.mapping, from: Kitchen.version("Kitchen 1", Kitchen.source), to: Kitchen.version("Kitchen 2", Kitchen.destination),
            schema: "shop", options: PlanningOptions(forceStreaming: true)
        )
        let streams = (streamed.staged?.catchUp?.round ?? []).compactMap { part -> String? in
            if case .stream(let stream) = part { return stream.sourceRows.text }
            return nil
        }
        #expect(streams.count == 2)
        #expect(streams.allSatisfy { $0.contains(#"AND s._pk IN (SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = "#) })
    }

    static func policyStep(hooks: Set<PolicyHook>?, perRound: Bool = false) throws -> PlannedStep {
        var policy = Kitchen.mapping
        policy.entityMappings[1].policy = "Check"
        return try HeavyweightMigration.step(
            mapping: policy, from: Kitchen.version("Kitchen 1", Kitchen.source), to: Kitchen.version("Kitchen 2", Kitchen.destination),
            schema: "shop", options: PlanningOptions(
                registeredPolicies: ["Check"], policyHooks: hooks.map { ["Check": $0] } ?? [:], perRoundPolicies: perRound ? ["Check"] : []
            )
        )
    }

    static func streams(_ round: [OnlineCatchUp.CatchUpStep]) -> [String] {
        round.compactMap { part in
            switch part {
            case .stream(let stream): return "stream " + stream.entityMapping
            case .createRelationships(let mapping, _): return "createRelationships " + mapping
            case .statement: return nil
            }
        }
    }

    @Test func aPolicyWithoutDeclaredHooksOrWithAWholeMappingHookRunsAgainWholeUnderTheWriteGuard() throws {
        let keys = #"(SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = 'recipe')"#
        for hooks: Set<PolicyHook>? in [nil, [.createDestinationInstances, .endInstanceCreation], [.begin, .endRelationshipCreation, .performCustomValidation]] {
            let step = try Self.policyStep(hooks: hooks)
            #expect(step.staged?.refusal == nil)
            let catchUp = try #require(step.staged?.catchUp)
            #expect(catchUp.rerunWhole == ["RecipeToRecipe"])
            // Before the guard: the policy is not called; its rows' links are cleared for the logged keys.
            #expect(Self.streams(catchUp.round) == [])
            #expect(Self.statements(step).contains("""
                UPDATE "shop~staging"."recipe" AS d SET "author_pk" = NULL
                WHERE d._pk IN (SELECT destination_pk FROM "shop~staging"."_association_rows" WHERE entity_mapping = 'RecipeToRecipe' AND source_pk IN \(keys))
                """))
            #expect(!Self.statements(step).contains { $0.contains(#"DELETE FROM "shop~staging"."recipe""#) })
            // Under the guard: every row it reads joins the keys, and it runs whole through the policy.
            #expect(catchUp.wholeKeys.map(\.sql.text) == ["""
                INSERT INTO "shop~staging"."_catch_up_keys" (table_name, pk)
                SELECT 'recipe', s._pk FROM "shop"."recipe" AS s WHERE s._entity IN ('Recipe')
                UNION
                SELECT 'recipe', a.source_pk FROM "shop~staging"."_association_rows" AS a WHERE a.entity_mapping = 'RecipeToRecipe'
                ON CONFLICT DO NOTHING
                """, #"ANALYZE "shop~staging"."_catch_up_keys""#])
            #expect(Self.streams(catchUp.guardedRound) == ["stream RecipeToRecipe", "createRelationships RecipeToRecipe"])
            let guarded = catchUp.guardedRound.compactMap { part -> String? in
                if case .statement(let statement) = part { return statement.sql.text }
                return nil
            }
            #expect(guarded.contains("""
                DELETE FROM "shop~staging"."chef" AS d USING "shop~staging"."_policy_instances" AS p
                WHERE p.entity_mapping = 'RecipeToRecipe' AND p.destination_table = 'chef' AND d._pk = p.destination_pk
                """), "every instance the policy inserted goes, those of hooks over the whole mapping too")
            #expect(guarded.contains("""
                DELETE FROM "shop~staging"."recipe" AS d USING "shop~staging"."_association_rows" AS a
                WHERE a.entity_mapping = 'RecipeToRecipe' AND a.destination_pk = d._pk AND a.source_pk IN \(keys)
                """))
            // plan --online shows the stall before the run.
            let phases = OnlineCatchUp.phases(of: step, store: "shop")
            #expect(phases.last?.summary.hasPrefix("write guard on shop.chef, shop.recipe, then the last catch-up round with RecipeToRecipe through policy 'Check' run again whole (its hooks over the whole entity mapping see the final data once, as offline), the rest of stage 3 (") == true)
            #expect(phases.last?.holdText.contains(", plus every row RecipeToRecipe maps (the rows of shop.recipe) and the rows reading them through a to-one, mapped again through the policy: this grows with those rows; writes wait, reads go on") == true)
            #expect(phases.last?.blocksWrites == true && phases.last?.lock == .share)
        }
        // With the estimates of a plan, the rows are counted.
        var estimated = try Self.policyStep(hooks: nil)
        var work = try #require(estimated.staged)
        for index in work.passes.indices where work.passes[index].sourceTable == "recipe" { work.passes[index].rowEstimate = 1200 }
        estimated.body = .staged(work)
        #expect(OnlineCatchUp.phases(of: estimated, store: "shop").last?.holdText.contains("(about 1200 rows of shop.recipe)") == true)
    }

    @Test func rowsLinkingToAMappingRunAgainWholeJoinTheKeysUnderTheGuard() throws {
        var policy = Kitchen.mapping
        policy.entityMappings[0].policy = "Check"
        let step = try HeavyweightMigration.step(
            mapping: policy, from: Kitchen.version("Kitchen 1", Kitchen.source), to: Kitchen.version("Kitchen 2", Kitchen.destination),
            schema: "shop", options: PlanningOptions(registeredPolicies: ["Check"])
        )
        let catchUp = try #require(step.staged?.catchUp)
        #expect(catchUp.rerunWhole == ["ChefToChef"])
        // Recipes link to chefs through ChefToChef's associations, which new chefs get only there.
        #expect(catchUp.wholeKeys.map(\.sql.text).dropFirst().first == """
            INSERT INTO "shop~staging"."_catch_up_keys" (table_name, pk)
            SELECT DISTINCT 'recipe', s._pk FROM "shop"."recipe" AS s
            WHERE "s"."chef_pk" IN (SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = 'chef')
            ON CONFLICT DO NOTHING
            """)
    }

    @Test func aPolicyRunningItsWholeMappingHooksPerRoundRunsInEveryRound() throws {
        let step = try Self.policyStep(hooks: [.createDestinationInstances, .endInstanceCreation], perRound: true)
        let catchUp = try #require(step.staged?.catchUp)
        #expect(catchUp.rerunWhole == [] && catchUp.wholeKeys == [])
        #expect(Self.streams(catchUp.round) == ["stream RecipeToRecipe", "createRelationships RecipeToRecipe"])
        #expect(catchUp.guardedRound == catchUp.round)
        #expect(OnlineCatchUp.phases(of: step, store: "shop").last?.summary.hasPrefix("write guard on shop.chef, shop.recipe, then the last catch-up round, the rest of stage 3") == true)
    }

    @Test func aPolicyWithPerInstanceHooksRunsAgainForTheLoggedKeysAfterItsInsertedInstancesGo() throws {
        // Validation and the end hook run once in stage 3, after the last round, as offline.
        let step = try Self.policyStep(hooks: [.createDestinationInstances, .createRelationships, .performCustomValidation, .end])
        #expect(step.staged?.refusal == nil)
        let round = try #require(step.staged?.catchUp?.round)
        let keys = #"(SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = 'recipe')"#
        // After the chefs logged (ChefToChef comes first), the recipes' policy instances.
        #expect(Array(Self.statements(step).dropFirst().prefix(3)) == [
            """
            DELETE FROM "shop~staging"."chef" AS d USING "shop~staging"."_policy_instances" AS p
            WHERE p.entity_mapping = 'RecipeToRecipe' AND p.source_pk IN \(keys) AND p.destination_table = 'chef' AND d._pk = p.destination_pk
            """,
            """
            DELETE FROM "shop~staging"."recipe" AS d USING "shop~staging"."_policy_instances" AS p
            WHERE p.entity_mapping = 'RecipeToRecipe' AND p.source_pk IN \(keys) AND p.destination_table = 'recipe' AND d._pk = p.destination_pk
            """,
            """
            DELETE FROM "shop~staging"."_policy_instances" AS p WHERE p.entity_mapping = 'RecipeToRecipe' AND p.source_pk IN \(keys)
            """,
        ])
        let streams = round.compactMap { part -> StreamedMapping? in
            if case .stream(let stream) = part { return stream }
            return nil
        }
        #expect(streams.map(\.policy) == ["Check"])
        #expect(streams.first?.sourceRows.text.contains("AND s._pk IN \(keys)") == true)
        // The stage 2 hook comes last, for the rows made from the logged keys.
        guard case .createRelationships(let mapping, let sourceKeys)? = round.last else {
            Issue.record("the round ends with the policy's stage 2 hook: \(String(describing: round.last))")
            return
        }
        #expect(mapping == "RecipeToRecipe" && sourceKeys.text == keys)
        #expect(OnlineCatchUp.phases(of: step, store: "shop").map(\.summary).contains(
            "catch-up rounds: the rows written meanwhile mapped again (RecipeToRecipe through policy 'Check': its per-instance hooks for those rows, the instances it inserted for them replaced), until at most 1000 writes are left (at most 8 rounds)"
        ))
        // Chefs keep their source keys: a policy's chefs take keys from the old store's sequence.
        #expect(step.staged?.catchUp?.keptKeys == ["chef": "chef"])
    }

    @Test func joinTablePairsOfLoggedRowsGoAndOrderedOwnersAreNumberedAgain() throws {
        let v1 = "Recipe: {attributes: {name: string}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true, ordered: true}}}\nTag: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}"
        let mapping = MappingModel(source: "v1", destination: "v2", entityMappings: [
            EntityMappingDefinition(name: "RecipeToRecipe", type: .copy, sourceEntity: "Recipe", destinationEntity: "Recipe"),
            EntityMappingDefinition(name: "TagToTag", type: .copy, sourceEntity: "Tag", destinationEntity: "Tag"),
        ], file: "tags.yaml")
        let step = try HeavyweightMigration.step(mapping: mapping, from: Kitchen.version("v1", v1), to: Kitchen.version("v2", v1), schema: "shop")
        #expect(step.staged?.refusal == nil)
        let phases = OnlineCatchUp.phases(of: step, store: "shop").map(\.summary)
        #expect(phases.first?.hasSuffix(" (a link of shop.recipe__tags logs the keys of the two rows it joins); a TRUNCATE logs the keys of the rows it removes") == true, "\(phases)")
        #expect(phases.contains("catch-up rounds: the rows written meanwhile mapped again (their links in recipe__tags made again), until at most 1000 writes are left (at most 8 rounds)"))
        // The join table's trigger logs the keys of both rows each link joins.
        #expect(step.staged?.catchUp?.install.last?.sql.text == """
            CREATE TRIGGER "_orchestrator_row" AFTER INSERT OR UPDATE OR DELETE ON "shop"."recipe__tags" FOR EACH ROW EXECUTE FUNCTION "shop~staging"."_record_row_change"('recipe', 'recipe_pk', 'tag', 'tags_pk')
            """)
        let statements = Self.statements(step)
        let recipes = #"(SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = 'recipe')"#
        let tags = #"(SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = 'tag')"#
        #expect(statements.contains("""
            INSERT INTO "shop~staging"."_catch_up_owners" (link, pk)
            SELECT DISTINCT 'RecipeToRecipe.tags', j."recipe_pk" FROM "shop~staging"."recipe__tags" AS j
            WHERE j."recipe_pk" IS NOT NULL AND j."tags_pk" IN \(tags)
            ON CONFLICT DO NOTHING
            """))
        #expect(statements.contains("""
            DELETE FROM "shop~staging"."recipe__tags" AS j
            WHERE j."recipe_pk" IN \(recipes) OR j."tags_pk" IN \(tags)
            """))
        // Those owners' links are inserted again, with every position.
        #expect(statements.contains { $0.hasPrefix(#"INSERT INTO "shop~staging"."recipe__tags""#)
            && $0.contains(#"OR a.destination_pk IN (SELECT pk FROM "shop~staging"."_catch_up_owners" WHERE link = 'RecipeToRecipe.tags')"#) })
        // Both deletions come before any row or association goes.
        guard let firstRowDelete = statements.firstIndex(where: { $0.hasPrefix(#"DELETE FROM "shop~staging"."recipe" AS d"#) }) else {
            Issue.record("the round deletes the recipes made from the logged keys")
            return
        }
        #expect(statements.prefix(firstRowDelete).contains { $0.hasPrefix(#"DELETE FROM "shop~staging"."recipe__tags""#) })
    }

    @Test func rowsReadingALoggedRowThroughAToOneJoinTheKeysFirst() throws {
        var named = Kitchen.mapping
        named.entityMappings[1].attributeMappings.append(PropertyMappingDefinition(name: "name", valueExpression: "$source.chef.name"))
        let first = Self.statements(try Kitchen.step(named)).first ?? ""
        #expect(first.hasPrefix(#"INSERT INTO "shop~staging"."_catch_up_keys" (table_name, pk)"#))
        #expect(first.contains(#"SELECT DISTINCT 'recipe', s._pk FROM "shop"."recipe" AS s"#))
        #expect(first.contains(#"."_pk" IN (SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = 'chef')"#))

        // Card keeps the one-to-one's column: a card moving to another recipe, or deleted,
        // writes no recipe, so the card's trigger logs the recipe it pointed at before.
        let cards = "Card: {attributes: {title: string}, relationships: {recipe: {destination: Recipe, inverse: card}}}\nRecipe: {attributes: {name: string}, relationships: {card: {destination: Card, inverse: recipe}}}"
        let mapping = MappingModel(source: "v1", destination: "v2", entityMappings: [
            EntityMappingDefinition(name: "CardToCard", type: .copy, sourceEntity: "Card", destinationEntity: "Card"),
            EntityMappingDefinition(name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe",
                                    attributeMappings: [PropertyMappingDefinition(name: "name", valueExpression: "$source.card.title")]),
        ], file: "cards.yaml")
        let step = try HeavyweightMigration.step(mapping: mapping, from: Kitchen.version("v1", cards), to: Kitchen.version("v2", cards), schema: "shop")
        #expect(step.staged?.refusal == nil)
        let catchUp = try #require(step.staged?.catchUp)
        #expect(catchUp.loggedPointers == ["card.recipe_pk"])
        #expect(catchUp.install.last?.sql.text == """
            CREATE TRIGGER "_orchestrator_pointed_row" AFTER UPDATE OF "recipe_pk" OR DELETE ON "shop"."card" FOR EACH ROW EXECUTE FUNCTION "shop~staging"."_record_row_change"('recipe', 'recipe_pk')
            """)
        #expect(catchUp.install.filter { $0.sql.text.contains(OnlineCatchUp.pointedTrigger) }.count == 2, "the function and one trigger, on card only")
        let function = try #require(catchUp.install.first { $0.sql.text.hasPrefix("CREATE FUNCTION") }).sql.text
        #expect(function.contains("IF TG_NAME = '_orchestrator_pointed_row' THEN"))
        #expect(function.contains("IF pointed IS NOT NULL AND (TG_OP = 'DELETE' OR pointed IS DISTINCT FROM (to_jsonb(NEW) ->> TG_ARGV[2 * i + 1])::bigint) THEN"))
        // The recipe the card points at now joins through the path, as for a to-one column.
        let paths = Self.statements(step).filter { $0.hasPrefix(#"INSERT INTO "shop~staging"."_catch_up_keys""#) }
        #expect(paths == ["""
            INSERT INTO "shop~staging"."_catch_up_keys" (table_name, pk)
            SELECT DISTINCT 'recipe', s._pk FROM "shop"."recipe" AS s
            LEFT JOIN "shop"."card" AS "s.card" ON "s.card"."recipe_pk" = "s"."_pk"
            WHERE "s.card"."_pk" IN (SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = 'card')
            ON CONFLICT DO NOTHING
            """])
        #expect(OnlineCatchUp.phases(of: step, store: "shop").first?.summary
            == "install the change logs and the row triggers on shop.card, shop.recipe (a change or delete of shop.card.recipe_pk logs the key it pointed at); a TRUNCATE logs the keys of the rows it removes")
    }

    @Test func planOnlineShowsEachPhaseItsLockAndWhetherWritesWait() throws {
        let phases = OnlineCatchUp.phases(of: try Kitchen.step(), store: "shop")
        #expect(phases.map(\.summary) == [
            "install the change logs and the row triggers on shop.chef, shop.recipe; a TRUNCATE logs the keys of the rows it removes",
            "prepare (setBased)",
            "createInstances ChefToChef (setBased)",
            "createInstances RecipeToRecipe (setBased)",
            "catch-up rounds: the rows written meanwhile mapped again, until at most 1000 writes are left (at most 8 rounds)",
            "stage 3's build: NOT NULLs and checks of to-one columns, foreign keys, unique constraints, indexes and to-many counts of the new tables, then catch-up rounds again",
            "write guard on shop.chef, shop.recipe, then the last catch-up round, the rest of stage 3 (required links, foreign keys and to-many counts of the rows written after the build) and the swap, in one transaction",
        ])
        #expect(phases.map(\.lock) == [.shareRowExclusive, .accessShare, .accessShare, .accessShare, .accessShare, .accessShare, .share])
        #expect(phases.map(\.blocksWrites) == [false, false, false, false, false, false, true])
    }
}
