import Testing
import Mapping
import ObjectModel
@testable import Planning

@Suite struct PlannerTests {
    static func metadata(_ version: ModelVersion) -> StoreMetadata {
        let hashes = VersionHash.hashes(of: version)
        return StoreMetadata(modelName: "Recipes", versionName: version.name, modelHash: hashes.model, entityHashes: hashes.entities, versionIdentifiers: [])
    }

    @Test func aMissingStoreGetsOneCreateStep() throws {
        let model = try Fixtures.model("migrations")
        let plan = try Planner.plan(model: model, snapshot: StoreSnapshot(store: "recipes", schemaExists: false, metadata: nil))
        #expect(plan.status == .missing)
        #expect(plan.steps.map(\.kind) == [.create])
        #expect(plan.steps[0].to == "Recipes 3")
        #expect(plan.steps[0].statements.first?.sql.text == #"CREATE SCHEMA "recipes""#)
        #expect(plan.isExecutable)
    }

    @Test func aStoreWithTheCurrentHashesIsUpToDate() throws {
        let model = try Fixtures.model("migrations")
        let snapshot = StoreSnapshot(store: "recipes", schemaExists: true, metadata: Self.metadata(model.currentVersion))
        let plan = try Planner.plan(model: model, snapshot: snapshot)
        #expect(plan.isUpToDate)
        #expect(plan.steps.isEmpty)
        #expect(plan.storeVersion == "Recipes 3")
    }

    @Test func anOlderStoreIsFoundByHashAndNeedsAMigration() throws {
        let model = try Fixtures.model("migrations")
        let snapshot = StoreSnapshot(store: "recipes", schemaExists: true, metadata: Self.metadata(model.versions[0]))
        let plan = try Planner.plan(model: model, snapshot: snapshot)
        #expect(plan.status == .migrationRequired)
        #expect(plan.storeVersion == "Recipes 1")
        #expect(plan.isExecutable)
        #expect(plan.steps.map(\.kind) == [.lightweight])
    }

    @Test func aVersionKnownOnlyToTheDatabaseIsStillFound() throws {
        let model = try Fixtures.model("migrations")
        var metadata = Self.metadata(model.versions[0])
        metadata.modelHash = String(repeating: "cd", count: 32)
        let snapshot = StoreSnapshot(store: "recipes", schemaExists: true, metadata: metadata)
        let plan = try Planner.plan(model: model, snapshot: snapshot, recordedVersions: [RecordedVersion(name: "Recipes 0", modelHash: metadata.modelHash)])
        #expect(plan.storeVersion == "Recipes 0")
        #expect(plan.storeVersionIsRecordedOnly)
    }

    @Test func aStoreOfAnUnknownVersionIsAnErrorNamingItsHash() throws {
        let model = try Fixtures.model("migrations")
        var metadata = Self.metadata(model.versions[0])
        metadata.modelHash = String(repeating: "ab", count: 32)
        let snapshot = StoreSnapshot(store: "recipes", schemaExists: true, metadata: metadata)
        let error = #expect(throws: PlanningError.self) { try Planner.plan(model: model, snapshot: snapshot) }
        #expect(error?.description.contains(String(repeating: "ab", count: 32)) == true)
        #expect(error?.description.contains("store 'recipes'") == true)
    }

    @Test func aSchemaThatIsNotAStoreIsNeverTouched() throws {
        let model = try Fixtures.model("migrations")
        #expect(throws: PlanningError.schemaWithoutMetadata(store: "recipes")) {
            try Planner.plan(model: model, snapshot: StoreSnapshot(store: "recipes", schemaExists: true, metadata: nil))
        }
    }

    @Test func anUnknownTargetVersionIsNamed() throws {
        let model = try Fixtures.model("migrations")
        #expect(throws: PlanningError.unknownTargetVersion(name: "Recipes 9", available: ["Recipes 1", "Recipes 2", "Recipes 3"])) {
            try Planner.plan(model: model, targetVersion: "Recipes 9", snapshot: StoreSnapshot(store: "r", schemaExists: false, metadata: nil))
        }
    }

    @Test func anExplicitMappingModelOnTheWayIsNeverInferredPast() throws {
        let model = try Fixtures.model("migrations")
        let snapshot = StoreSnapshot(store: "recipes", schemaExists: true, metadata: Self.metadata(model.versions[0]))
        // Without the mapping model at hand, the planner can only stop there.
        let unloaded = ExplicitMapping(source: "Recipes 2", destination: "Recipes 3", file: "recipes-2-to-3.yaml")
        let plan = try Planner.plan(model: model, snapshot: snapshot, explicitMappings: [unloaded])
        #expect(plan.steps.isEmpty)
        #expect(!plan.isExecutable)
        #expect(plan.blockers == [
            "'Recipes 2' -> 'Recipes 3' has an explicit mapping model (recipes-2-to-3.yaml), which was not loaded for planning; inferring past it would skip the transformation it defines",
        ])
        // With it: lightweight up to its source, then the mapping model as a heavyweight step.
        let mapping = MappingModel(source: "Recipes 2", destination: "Recipes 3", entityMappings: Self.recipes2To3(policy: nil), file: "recipes-2-to-3.yaml")
        let running = try Planner.plan(model: model, snapshot: snapshot, explicitMappings: [ExplicitMapping(mapping)])
        #expect(running.isExecutable, "\(running.blockers)")
        #expect(running.steps.map(\.kind) == [.lightweight, .heavyweight])
        #expect(running.steps.map(\.to) == ["Recipes 2", "Recipes 3"])
        // A mapping naming a policy the program did not register is a blocker naming both.
        let withPolicy = MappingModel(source: "Recipes 2", destination: "Recipes 3", entityMappings: Self.recipes2To3(policy: "RatingPolicy"), file: "recipes-2-to-3.yaml")
        let blocked = try Planner.plan(model: model, snapshot: snapshot, explicitMappings: [ExplicitMapping(withPolicy)])
        #expect(blocked.steps.isEmpty)
        #expect(blocked.blockers == [
            "'Recipes 2' -> 'Recipes 3': recipes-2-to-3.yaml: entity mapping RecipeToRecipe: custom policy 'RatingPolicy' is not registered (none is registered); build an orchestrator executable that registers it, see docs/custom-policies.md",
        ])
        // A mapping model off the path (the store is already past it) changes nothing.
        let later = StoreSnapshot(store: "recipes", schemaExists: true, metadata: Self.metadata(model.versions[1]))
        let unaffected = try Planner.plan(model: model, snapshot: later, explicitMappings: [ExplicitMapping(source: "Recipes 1", destination: "Recipes 2", file: "x.yaml")])
        #expect(unaffected.isExecutable)
        #expect(unaffected.steps.map(\.kind) == [.lightweight])
    }

    /// A mapping model from the store's version straight to the target is the one step, whatever
    /// mapping models lie between (Core Data's rule): here the direct one is the only one planned.
    @Test func aDirectExplicitMappingModelIsTakenOverAChain() throws {
        let model = try Fixtures.model("migrations")
        let snapshot = StoreSnapshot(store: "recipes", schemaExists: true, metadata: Self.metadata(model.versions[0]))
        let between = MappingModel(source: "Recipes 2", destination: "Recipes 3", entityMappings: Self.recipes2To3(policy: nil), file: "recipes-2-to-3.yaml")
        let direct = ExplicitMapping(source: "Recipes 1", destination: "Recipes 3", file: "recipes-1-to-3.yaml")
        let plan = try Planner.plan(model: model, snapshot: snapshot, explicitMappings: [ExplicitMapping(between), direct])
        #expect(plan.blockers == [
            "'Recipes 1' -> 'Recipes 3' has an explicit mapping model (recipes-1-to-3.yaml), which was not loaded for planning; inferring past it would skip the transformation it defines",
        ])
        let fromTwo = try Planner.plan(
            model: model, snapshot: StoreSnapshot(store: "recipes", schemaExists: true, metadata: Self.metadata(model.versions[1])),
            explicitMappings: [ExplicitMapping(between), direct]
        )
        #expect(fromTwo.steps.map(\.kind) == [.heavyweight], "\(fromTwo.blockers)")
    }

    /// Recipes 2 -> 3 by hand: every entity copied, Recipe's rating given a value.
    static func recipes2To3(policy: String?) -> [EntityMappingDefinition] {
        [
            EntityMappingDefinition(name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe", policy: policy,
                                    attributeMappings: [PropertyMappingDefinition(name: "rating", valueExpression: "3")]),
            EntityMappingDefinition(name: "ChefToChef", type: .copy, sourceEntity: "Chef", destinationEntity: "Chef"),
            EntityMappingDefinition(name: "IngredientToIngredient", type: .copy, sourceEntity: "Ingredient", destinationEntity: "Ingredient"),
            EntityMappingDefinition(name: "CuisineToCuisine", type: .copy, sourceEntity: "Cuisine", destinationEntity: "Cuisine"),
        ]
    }
}
