import Testing
import Mapping
import ObjectModel
@testable import Planning

/// The SQL of a heavyweight step, pinned as exact text.
@Suite struct HeavyweightMigrationTests {
    static func version(_ name: String, _ entities: String) throws -> ModelVersion {
        try NativeModelLoader.parseVersion("entities:\n" + entities.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n", name: name, file: name + ".yaml")
    }

    static let source = "Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true}}}\nRecipe: {attributes: {name: string, amount: int32, temperature: double}, relationships: {chef: {destination: Chef, inverse: recipes}}}"
    static let destination = "Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: author, toMany: true}}}\nRecipe: {attributes: {name: string, totalCost: int64, temperatureC: double}, relationships: {author: {destination: Chef, inverse: recipes, optional: false}}}"

    static let mapping = MappingModel(source: "Kitchen 1", destination: "Kitchen 2", entityMappings: [
        EntityMappingDefinition(name: "ChefToChef", type: .copy, sourceEntity: "Chef", destinationEntity: "Chef"),
        EntityMappingDefinition(
            name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe", filter: "amount > 100",
            attributeMappings: [
                PropertyMappingDefinition(name: "totalCost", valueExpression: "$source.amount"),
                PropertyMappingDefinition(name: "temperatureC", valueExpression: "($source.temperature - 32.0) / 1.8"),
            ],
            relationshipMappings: [
                PropertyMappingDefinition(name: "author", valueExpression: #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToChef", $source.chef)"#),
            ]
        ),
    ], file: "kitchen.yaml")

    static func step(_ mapping: MappingModel = mapping) throws -> PlannedStep {
        try HeavyweightMigration.step(mapping: mapping, from: version("Kitchen 1", source), to: version("Kitchen 2", destination), schema: "shop")
    }

    static func sql(_ step: PlannedStep, _ summary: String) -> String? {
        step.statements.first { $0.summary == summary }?.sql.text
    }

    /// Each entity mapping fills its destination table alone: the rows keep their source keys,
    /// the association is a view over the source rows, and the to-one link is set by the INSERT.
    @Test func stageOneKeepsSourceKeysAndLinksToOnesByKey() throws {
        let step = try Self.step()
        #expect(step.kind == .heavyweight && step.from == "Kitchen 1" && step.to == "Kitchen 2")
        #expect(Self.sql(step, "create the association view (entity mappings keeping their source keys read the source rows)") == """
            CREATE VIEW "shop~staging"."_association" (entity_mapping, source_pk, destination_pk) AS
            SELECT entity_mapping, source_pk, destination_pk FROM "shop~staging"."_association_rows"
            UNION ALL
            SELECT 'ChefToChef'::text, s._pk, s._pk
            FROM "shop"."chef" AS s
            WHERE "s"."_entity" IN ('Chef')
            UNION ALL
            SELECT 'RecipeToRecipe'::text, s._pk, s._pk
            FROM "shop"."recipe" AS s
            WHERE "s"."_entity" IN ('Recipe') AND ("s"."amount" > 100)
            """)
        // ChefToChef keeps every chef's key: the link is the source row's chef key itself.
        #expect(Self.sql(step, "stage 1, RecipeToRecipe: insert Recipe rows with their attributes and author_pk, keeping their keys") == """
            INSERT INTO "shop~staging"."recipe" ("_pk", "_entity", "name", "total_cost", "temperature_c", "author_pk")
            SELECT s._pk, 'Recipe', "s"."name", "s"."amount", (("s"."temperature" - 32.0) / 1.8), "s"."chef_pk"
            FROM "shop"."recipe" AS s
            WHERE "s"."_entity" IN ('Recipe') AND ("s"."amount" > 100)
            """)
        // An unmapped attribute of the same name gets Xcode's default, $source.name.
        #expect(Self.sql(step, "stage 1, ChefToChef: insert Chef rows with their attributes, keeping their keys")?.contains(#"SELECT s._pk, 'Chef', "s"."name""#) == true)
        // New keys start after the kept ones; no association rows, no stage 2.
        #expect(Self.sql(step, "keys of shop~staging.recipe after those kept from shop.recipe") == """
            SELECT setval(pg_get_serial_sequence('"shop~staging"."recipe"', '_pk'), greatest((SELECT max(_pk) FROM "shop"."recipe"), 1))
            """)
        #expect(!step.statements.contains { $0.summary.hasPrefix("stage 2") || $0.sql.text.contains("INSERT INTO \"shop~staging\".\"_association_rows\"") })
    }

    /// Chefs filtered: a recipe's chef may not be migrated, so the link goes through ChefToChef's
    /// association (the view over the chefs it reads) and is empty for the others.
    @Test func aLinkToAFilteredMappingGoesThroughTheAssociationView() throws {
        var filtered = Self.mapping
        filtered.entityMappings[0].filter = "name != nil"
        let step = try Self.step(filtered)
        #expect(Self.sql(step, "stage 1, RecipeToRecipe: insert Recipe rows with their attributes and author_pk, keeping their keys") == """
            INSERT INTO "shop~staging"."recipe" ("_pk", "_entity", "name", "total_cost", "temperature_c", "author_pk")
            SELECT s._pk, 'Recipe', "s"."name", "s"."amount", (("s"."temperature" - 32.0) / 1.8), "l.author_pk"."destination_pk"
            FROM "shop"."recipe" AS s
            LEFT JOIN "shop~staging"."_association" AS "l.author_pk" ON "l.author_pk"."entity_mapping" = 'ChefToChef' AND "l.author_pk"."source_pk" = "s"."chef_pk"
            WHERE "s"."_entity" IN ('Recipe') AND ("s"."amount" > 100)
            """)
    }

    /// A mapping with a policy may drop rows: it gets new keys through the association rows;
    /// its to-one link is read with each streamed row.
    @Test func aMappingThatMayDropRowsGetsNewKeysAndItsLinksStream() throws {
        var withPolicy = Self.mapping
        withPolicy.entityMappings[1].policy = "RatingPolicy"
        let step = try HeavyweightMigration.step(
            mapping: withPolicy, from: Self.version("Kitchen 1", Self.source), to: Self.version("Kitchen 2", Self.destination), schema: "shop",
            options: PlanningOptions(registeredPolicies: ["RatingPolicy"])
        )
        #expect(Self.sql(step, "stage 1, RecipeToRecipe: associate each Recipe row passing the filter with a new Recipe key") == """
            INSERT INTO "shop~staging"."_association_rows" (entity_mapping, source_pk, destination_pk)
            SELECT 'RecipeToRecipe', s._pk, nextval(pg_get_serial_sequence('"shop~staging"."recipe"', '_pk'))
            FROM "shop"."recipe" AS s
            WHERE "s"."_entity" IN ('Recipe') AND ("s"."amount" > 100)
            ORDER BY s._pk
            """)
        // The author link comes with each streamed row: the chef's key, kept by ChefToChef.
        let stream = try #require(step.passes.first { $0.entityMapping == "RecipeToRecipe" && $0.stage == .createInstances }?.stream)
        #expect(stream.links == [StreamedMapping.StreamedLink(column: "author_pk", key: "_link.author_pk")])
        #expect(stream.sourceRows.text.contains(#""s"."chef_pk" AS "_link.author_pk""#))
        #expect(!step.statements.contains { $0.summary.hasPrefix("stage 2, RecipeToRecipe: recipe.author_pk") })
        #expect(step.passes.map(\.name) == [
            "prepare", "createInstances ChefToChef", "createInstances RecipeToRecipe",
            "createRelationships RecipeToRecipe (to-many)", "validate",
        ])
    }

    @Test func aRequiredToOneIsNullableUntilStageThreeAndTheStepEndsWithTheSwap() throws {
        let step = try Self.step()
        let texts = step.statements.map(\.sql.text)
        let create = try #require(texts.first { $0.hasPrefix(#"CREATE TABLE "shop~staging"."recipe""#) })
        #expect(create.contains(#""author_pk" bigint,"#))
        let setNotNull = try #require(texts.firstIndex(of: #"ALTER TABLE "shop~staging"."recipe" ALTER COLUMN "author_pk" SET NOT NULL"#))
        let link = try #require(texts.firstIndex { $0.hasPrefix(#"INSERT INTO "shop~staging"."recipe""#) })
        #expect(link < setNotNull)
        #expect(Array(texts.suffix(8)) == [
            #"DROP SCHEMA IF EXISTS "shop~" CASCADE"#,
            #"ALTER SCHEMA "shop" RENAME TO "shop~""#,
            #"ALTER FUNCTION "shop~staging"."_record_change"() SET SCHEMA "shop~""#,
            #"DROP FUNCTION IF EXISTS "shop~staging"."_record_staging_write"() CASCADE"#,
            #"DROP TABLE IF EXISTS "shop~staging"."_staging_writes""#,
            #"ALTER SCHEMA "shop~staging" RENAME TO "shop""#,
            #"DROP VIEW "shop"."_association""#,
            #"DROP TABLE "shop"."_association_rows", "shop"."_changes""#,
        ])
        // The filter leaves rows out; the planner got no row estimates.
        #expect(step.hazards.map(\.code) == [Hazard.Code.dataLoss, Hazard.Code.tableRewrite, Hazard.Code.fullScan, Hazard.Code.longLock])
        #expect(step.hazards[0].message == "rows of Recipe do not reach the new store: those the filter of RecipeToRecipe rejects; kept only in the backup schema shop~")
    }

    @Test func theStagingSchemaAndTheChangeTriggersOnEveryOldTableComeBeforeThePasses() throws {
        let step = try Self.step()
        let tracking = try #require(step.staged?.changeTracking)
        let texts = tracking.install.map(\.sql.text)
        #expect(Array(texts.prefix(2)) == [#"DROP SCHEMA IF EXISTS "shop~staging" CASCADE"#, #"CREATE SCHEMA "shop~staging""#])
        #expect(tracking.sourceTables == ["chef", "recipe"])
        #expect(texts.filter { $0.hasPrefix("CREATE TRIGGER") } == tracking.sourceTables.flatMap { table in [
            #"CREATE TRIGGER "_orchestrator_insert" AFTER INSERT ON "shop"."\#(table)" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "shop~staging"."_record_change"()"#,
            #"CREATE TRIGGER "_orchestrator_update" AFTER UPDATE ON "shop"."\#(table)" REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "shop~staging"."_record_change"()"#,
            #"CREATE TRIGGER "_orchestrator_delete" AFTER DELETE ON "shop"."\#(table)" REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "shop~staging"."_record_change"()"#,
            #"CREATE TRIGGER "_orchestrator_truncate" AFTER TRUNCATE ON "shop"."\#(table)" FOR EACH STATEMENT EXECUTE FUNCTION "shop~staging"."_record_change"()"#,
        ] })
        // Printed first, as `apply` runs them first; the passes no longer make the schema.
        #expect(Array(step.statements.prefix(texts.count).map(\.sql.text)) == texts)
        #expect(!step.passes.flatMap(\.statements).contains { $0.sql.text.contains("CREATE SCHEMA") })
    }

    @Test func thePreparePassEndsWithTheStagingWriteLogAndATriggerOnEveryStagingTable() throws {
        let step = try Self.step()
        let prepare = try #require(step.passes.first { $0.stage == .prepare }).statements.map(\.sql.text)
        #expect(Array(prepare.suffix(4)) == [
            """
            CREATE TABLE "shop~staging"."_staging_writes" (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                table_name text NOT NULL,
                operation text NOT NULL,
                written_at timestamptz NOT NULL DEFAULT clock_timestamp()
            )
            """,
            """
            CREATE FUNCTION "shop~staging"."_record_staging_write"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
            SET search_path TO "shop~staging", pg_catalog, pg_temp AS $body$
            BEGIN
                IF current_setting('orchestrator.runner', true) IS DISTINCT FROM 'on' THEN
                    INSERT INTO _staging_writes (table_name, operation) VALUES (TG_TABLE_NAME, TG_OP);
                END IF;
                RETURN NULL;
            END
            $body$
            """,
            #"CREATE TRIGGER "_orchestrator_staging_write" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "shop~staging"."chef" FOR EACH STATEMENT EXECUTE FUNCTION "shop~staging"."_record_staging_write"()"#,
            #"CREATE TRIGGER "_orchestrator_staging_write" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "shop~staging"."recipe" FOR EACH STATEMENT EXECUTE FUNCTION "shop~staging"."_record_staging_write"()"#,
        ])
    }

    @Test func eachCheckpointRecountsOnlyTheStagingTablesItsPassCanAddRowsTo() throws {
        let step = try Self.step()
        #expect(step.passes.map(\.name) == ["prepare", "createInstances ChefToChef", "createInstances RecipeToRecipe", "validate"])
        #expect(step.passes.map(\.tablesWritten) == [nil, ["chef"], ["recipe"], []])
        var withPolicy = Self.mapping
        withPolicy.entityMappings[1].policy = "RecipePolicy"
        let streamed = try HeavyweightMigration.step(
            mapping: withPolicy, from: Self.version("Kitchen 1", Self.source), to: Self.version("Kitchen 2", Self.destination), schema: "shop",
            options: PlanningOptions(registeredPolicies: ["RecipePolicy"])
        )
        // A policy may create or drop instances of any entity.
        #expect(streamed.passes.filter { $0.stage == .createInstances }.map(\.tablesWritten) == [["chef"], nil])
        #expect(streamed.passes.last?.tablesWritten == nil)
    }

    @Test func anUnregisteredPolicyIsRefusedNamingItAndTheEntityMapping() throws {
        var withPolicy = Self.mapping
        withPolicy.entityMappings[0].policy = "ChefPolicy"
        let refusal = #expect(throws: HeavyweightRefusal.self) { try Self.step(withPolicy) }
        #expect(refusal?.reasons == ["'Kitchen 1' -> 'Kitchen 2': kitchen.yaml: entity mapping ChefToChef: custom policy 'ChefPolicy' is not registered (none is registered); build an orchestrator executable that registers it, see docs/custom-policies.md"])
    }
}
