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

    @Test func stageOneAssociatesFilteredSourceRowsThenInsertsTheirCompiledValues() throws {
        let step = try Self.step()
        #expect(step.kind == .heavyweight && step.from == "Kitchen 1" && step.to == "Kitchen 2")
        #expect(Self.sql(step, "stage 1, RecipeToRecipe: associate each Recipe row passing the filter with a new Recipe key") == """
            INSERT INTO "shop~staging"."_association" (entity_mapping, source_pk, destination_pk)
            SELECT 'RecipeToRecipe', s._pk, nextval(pg_get_serial_sequence('"shop~staging"."recipe"', '_pk'))
            FROM "shop"."recipe" AS s
            WHERE "s"."_entity" IN ('Recipe') AND ("s"."amount" > 100)
            ORDER BY s._pk
            """)
        #expect(Self.sql(step, "stage 1, RecipeToRecipe: insert Recipe rows with their attributes") == """
            INSERT INTO "shop~staging"."recipe" ("_pk", "_entity", "name", "total_cost", "temperature_c")
            SELECT a.destination_pk, 'Recipe', "s"."name", "s"."amount", (("s"."temperature" - 32.0) / 1.8)
            FROM "shop~staging"."_association" AS a
            JOIN "shop"."recipe" AS s ON s._pk = a.source_pk
            WHERE a.entity_mapping = 'RecipeToRecipe'
            """)
        // An unmapped attribute of the same name gets Xcode's default, $source.name.
        #expect(Self.sql(step, "stage 1, ChefToChef: insert Chef rows with their attributes")?.contains(#"SELECT a.destination_pk, 'Chef', "s"."name""#) == true)
    }

    @Test func stageTwoLinksToOnesThroughTheAssociationTable() throws {
        let step = try Self.step()
        #expect(Self.sql(step, "stage 2, RecipeToRecipe: recipe.author_pk through ChefToChef from $source.chef") == """
            UPDATE "shop~staging"."recipe" AS d SET "author_pk" = a2.destination_pk
            FROM "shop~staging"."_association" AS a
            JOIN "shop"."recipe" AS s ON s._pk = a.source_pk
            JOIN "shop~staging"."_association" AS a2 ON a2.entity_mapping = 'ChefToChef' AND a2.source_pk = "s"."chef_pk"
            WHERE a.entity_mapping = 'RecipeToRecipe' AND d._pk = a.destination_pk
            """)
    }

    @Test func aRequiredToOneIsNullableUntilStageThreeAndTheStepEndsWithTheSwap() throws {
        let step = try Self.step()
        let texts = step.statements.map(\.sql.text)
        let create = try #require(texts.first { $0.hasPrefix(#"CREATE TABLE "shop~staging"."recipe""#) })
        #expect(create.contains(#""author_pk" bigint,"#))
        let setNotNull = try #require(texts.firstIndex(of: #"ALTER TABLE "shop~staging"."recipe" ALTER COLUMN "author_pk" SET NOT NULL"#))
        let link = try #require(texts.firstIndex { $0.hasPrefix(#"UPDATE "shop~staging"."recipe""#) })
        #expect(link < setNotNull)
        #expect(Array(texts.suffix(4)) == [
            #"DROP SCHEMA IF EXISTS "shop~" CASCADE"#,
            #"ALTER SCHEMA "shop" RENAME TO "shop~""#,
            #"ALTER SCHEMA "shop~staging" RENAME TO "shop""#,
            #"DROP TABLE "shop"."_association", "shop"."_checkpoint""#,
        ])
        #expect(step.hazards.map(\.code) == [Hazard.Code.tableRewrite, Hazard.Code.fullScan, Hazard.Code.longLock])
    }

    @Test func anUnregisteredPolicyIsRefusedNamingItAndTheEntityMapping() throws {
        var withPolicy = Self.mapping
        withPolicy.entityMappings[0].policy = "ChefPolicy"
        let refusal = #expect(throws: HeavyweightRefusal.self) { try Self.step(withPolicy) }
        #expect(refusal?.reasons == ["'Kitchen 1' -> 'Kitchen 2': kitchen.yaml: entity mapping ChefToChef: custom policy 'ChefPolicy' is not registered (none is registered); build an orchestrator executable that registers it, see docs/custom-policies.md"])
    }
}
