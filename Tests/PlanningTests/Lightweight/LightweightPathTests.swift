import Testing
import ObjectModel
@testable import Planning

/// How `plan` reaches the target: one inferred step, or a chain through the versions between.
@Suite struct LightweightPathTests {
    typealias M = InlineModels

    static func model(_ versions: [String]) throws -> VersionedModel {
        let parsed = try versions.enumerated().map { try InferenceFixtures.version($0.element, name: "v\($0.offset + 1)") }
        return VersionedModel(name: "Shop", versions: parsed, currentVersionName: parsed.last!.name, path: "inline", format: .native)
    }

    static func plan(_ model: VersionedModel, storeAt version: String, target: String? = nil, recorded: [RecordedVersion] = []) throws -> MigrationPlan {
        let hashes = VersionHash.hashes(of: model.version(named: version) ?? model.versions[0])
        let metadata = StoreMetadata(modelName: model.name, versionName: version, modelHash: recorded.first?.modelHash ?? hashes.model, entityHashes: hashes.entities, versionIdentifiers: [])
        return try Planner.plan(model: model, targetVersion: target, snapshot: StoreSnapshot(store: "shop", schemaExists: true, metadata: metadata), recordedVersions: recorded)
    }

    static let doubleRename = [
        M.recipe("a: string"),
        M.recipe("b: {type: string, renamingIdentifier: a}"),
        M.recipe("c: {type: string, renamingIdentifier: b}"),
    ]

    @Test func recipes1To3IsOneStepInferredDirectly() throws {
        let plan = try Self.plan(try Fixtures.model("migrations"), storeAt: "Recipes 1")
        #expect(plan.blockers == [])
        #expect(plan.steps.map { "\($0.kind) \($0.from!) -> \($0.to)" } == ["lightweight Recipes 1 -> Recipes 3"])
        #expect(plan.steps[0].statements.first?.sql.text == #"ALTER TABLE "shop"."recipe" RENAME COLUMN "instructions" TO "directions""#)
        #expect(plan.steps[0].hazards.filter(\.isDataLoss).isEmpty)
    }

    @Test func aPropertyRenamedTwiceGoesThroughTheVersionBetween() throws {
        let plan = try Self.plan(try Self.model(Self.doubleRename), storeAt: "v1")
        #expect(plan.blockers == [])
        #expect(plan.steps.map { "\($0.from!) -> \($0.to)" } == ["v1 -> v2", "v2 -> v3"])
        #expect(plan.steps.map { $0.statements.map(\.sql.text) } == [
            [#"ALTER TABLE "shop"."recipe" RENAME COLUMN "a" TO "b""#],
            [#"ALTER TABLE "shop"."recipe" RENAME COLUMN "b" TO "c""#],
        ])
    }

    @Test func aDirectMappingThatLosesDataIsTakenWhenTheChainCannotRun() throws {
        let model = try Self.model([
            M.recipe("name: string, notes: string"),
            M.recipe("name: string, notes: string, rating: {type: int16, optional: false}"),
            M.recipe("name: string"),
        ])
        let plan = try Self.plan(model, storeAt: "v1")
        #expect(plan.blockers == [])
        #expect(plan.steps.map { "\($0.from!) -> \($0.to)" } == ["v1 -> v3"])
        #expect(plan.steps[0].hazards.filter(\.isDataLoss).map(\.message) == ["Recipe.notes removed: its values are dropped"])
    }

    @Test func everyRefusalOfTheChainIsABlockerNamingEntityAndProperty() throws {
        let model = try Self.model([
            M.recipe("name: string, n: string"),
            M.recipe("name: string, n: int32"),
            M.recipe("name: string, n: int32, rating: {type: int16, optional: false}"),
        ])
        let plan = try Self.plan(model, storeAt: "v1")
        #expect(plan.steps.isEmpty)
        #expect(!plan.isExecutable)
        #expect(plan.blockers == [
            "'v1' -> 'v2': entity Recipe, property n: type changed from String to Integer 32; an inferred mapping converts only between number types (Boolean, Integer 16/32/64, Decimal, Float, Double), as Core Data's does (write a mapping model)",
            "'v2' -> 'v3': entity Recipe, property rating: added as non-optional without a default; existing rows would need a value invented (give it a default, make it optional, or write a mapping model)",
        ])
    }

    @Test func aTargetBeforeTheStoresVersionIsABlocker() throws {
        let plan = try Self.plan(try Self.model(Self.doubleRename), storeAt: "v3", target: "v1")
        #expect(plan.steps.isEmpty)
        #expect(plan.blockers == ["the store is at 'v3', which comes after 'v1' in the model's order; migrations only go forward (choose a later target version)"])
    }

    /// An `.xcdatamodeld` without a declared order: the name order is a guess, so a store whose
    /// version sorts after the target goes there by a direct step, as Core Data's would.
    @Test func againstAGuessedNameOrderTheDirectStepRuns() throws {
        var model = try Self.model([M.recipe("a: string"), M.recipe("a: string, b: string")])
        model.format = .xcode
        model.orderIsDeclared = false
        let plan = try Self.plan(model, storeAt: "v2", target: "v1")
        #expect(plan.blockers == [])
        #expect(plan.steps.map { "\($0.kind) \($0.from!) -> \($0.to)" } == ["lightweight v2 -> v1"])
        #expect(plan.steps[0].hazards.filter(\.isDataLoss).map(\.message) == ["Recipe.b removed: its values are dropped"])
    }

    @Test func againstAGuessedNameOrderWithoutADirectStepTheBlockerSaysHowToDeclareTheOrder() throws {
        var model = try Self.model([M.recipe("n: int32"), M.recipe("n: string")])
        model.format = .xcode
        model.orderIsDeclared = false
        model.path = "/models/Partner.xcdatamodeld"
        let plan = try Self.plan(model, storeAt: "v2", target: "v1")
        #expect(plan.steps.isEmpty)
        #expect(plan.blockerDetails.map(\.code) == [.notInferable, .noDirectStep])
        #expect(plan.blockerDetails.last?.message == #"the store is at 'v2', which sorts after 'v1' by name, and Partner.xcdatamodeld declares no order of its versions, so only a direct step can run, and none can (above); declare the order, oldest first, in /models/Partner.versions.yaml to go through the versions between (docs/model-format.md, "Order of versions")"#)
    }

    @Test func aVersionKnownOnlyToTheDatabaseCannotBeInferredFrom() throws {
        let model = try Self.model(Self.doubleRename)
        let plan = try Self.plan(model, storeAt: "v0", recorded: [RecordedVersion(name: "v0", modelHash: String(repeating: "ef", count: 32))])
        #expect(plan.storeVersionIsRecordedOnly)
        #expect(plan.blockers == [
            "the store is at 'v0', a version known only from the database's record of applied versions; migrations are inferred from versions in the model's files (add 'v0' back to them)",
        ])
    }

    @Test func aStepThatLosesDataSaysWhatIsLost() throws {
        let step = try LightweightFixtures.step(M.chefAndRecipes + "\nCuisine: {}", "Recipe: {}\nChef: {}")
        #expect(step.hazards.filter(\.isDataLoss).map(\.message) == [
            "Recipe.chef removed: its links are dropped",
            "Chef.recipes removed: its links are dropped",
            "entity Cuisine removed: every row of it is deleted",
        ])
        #expect(step.hazards.allSatisfy { [Hazard.Code.dataLoss, Hazard.Code.tableRewrite, Hazard.Code.fullScan, Hazard.Code.longLock].contains($0.code) })
    }

    @Test func aWideningIsATableRewriteUnderALongLock() throws {
        let step = try LightweightFixtures.step(M.recipe("n: int16"), M.recipe("n: int32"))
        #expect(step.hazards.map(\.code) == ["tableRewrite", "longLock"])
        #expect(step.statements.map(\.lock) == [.accessExclusive])
    }
}
