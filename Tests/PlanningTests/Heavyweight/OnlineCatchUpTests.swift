import Testing
import Mapping
import ObjectModel
@testable import Planning

/// The catch-up round of an online heavyweight step, pinned as exact text: the rows made from
/// the logged keys go, then stage 1 and stage 2 run again restricted to those keys.
@Suite struct OnlineCatchUpTests {
    typealias Kitchen = HeavyweightMigrationTests

    static func statements(_ step: PlannedStep) -> [String] {
        (step.onlineCatchUp?.round ?? []).compactMap { part in
            if case .statement(let statement) = part { return statement.sql.text }
            return nil
        }
    }

    @Test func rowsKeepingTheirKeysAreDeletedAndInsertedAgainForTheLoggedKeysOnly() throws {
        let step = try Kitchen.step()
        #expect(step.onlineRefusal == nil)
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
        #expect(step.onlineCatchUp?.keySequences.map(\.summary) == [
            "keys of shop~staging.chef after those kept from shop.chef", "keys of shop~staging.recipe after those kept from shop.recipe",
        ])
        // One row trigger per old table, logging into the staging schema.
        #expect(step.onlineCatchUp?.install.last?.sql.text == """
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
        let streams = (streamed.onlineCatchUp?.round ?? []).compactMap { part -> String? in
            if case .stream(let stream) = part { return stream.sourceRows.text }
            return nil
        }
        #expect(streams.count == 2)
        #expect(streams.allSatisfy { $0.contains(#"AND s._pk IN (SELECT pk FROM "shop~staging"."_catch_up_keys" WHERE table_name = "#) })
    }

    @Test func aStepWithAPolicyOrAJoinTableIsRefusedOnlineNamingWhy() throws {
        var policy = Kitchen.mapping
        policy.entityMappings[1].policy = "Check"
        let step = try HeavyweightMigration.step(
            mapping: policy, from: Kitchen.version("Kitchen 1", Kitchen.source), to: Kitchen.version("Kitchen 2", Kitchen.destination),
            schema: "shop", options: PlanningOptions(registeredPolicies: ["Check"])
        )
        #expect(step.onlineCatchUp == nil)
        #expect(step.onlineRefusal == "entity mapping RecipeToRecipe runs custom policy 'Check', whose hooks cannot be run again for the rows written meanwhile")
    }

    @Test func planOnlineShowsEachPhaseItsLockAndWhetherWritesWait() throws {
        let phases = OnlineCatchUp.phases(of: try Kitchen.step(), store: "shop")
        #expect(phases.map(\.summary) == [
            "install the change logs and the row triggers on shop.chef, shop.recipe",
            "prepare (setBased)",
            "createInstances ChefToChef (setBased)",
            "createInstances RecipeToRecipe (setBased)",
            "catch-up rounds: the rows written meanwhile mapped again, until at most 1000 writes are left (at most 8 rounds)",
            "stage 3's build: foreign keys, unique constraints and indexes of the new tables, then catch-up rounds again",
            "write guard on shop.chef, shop.recipe, then the last catch-up round, the rest of stage 3 (checks of the rows written after the build, NOT NULLs and to-many counts) and the swap, in one transaction",
        ])
        #expect(phases.map(\.lock) == [.shareRowExclusive, .accessShare, .accessShare, .accessShare, .accessShare, .accessShare, .share])
        #expect(phases.map(\.blocksWrites) == [false, false, false, false, false, false, true])
    }
}
