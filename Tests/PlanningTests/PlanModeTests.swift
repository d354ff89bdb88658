import Testing
import Mapping
import ObjectModel
@testable import Planning

/// Issue 21: `Planner.plan(…, mode:)` returns each step in the form it runs, a closed `StepBody`;
/// the step digest is the same in both modes, so a saved plan or a checkpoint names the same work.
@Suite struct PlanModeTests {
    typealias K = StoreSurroundingsTests

    /// Recipes at v1 (name, rating) to v2 (rating required with a default): one lightweight step.
    static func recipes() throws -> VersionedModel {
        let v1 = try InferenceFixtures.version("Recipe: {attributes: {name: string, rating: int16}}", name: "v1")
        let v2 = try InferenceFixtures.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: false, default: 0}}}", name: "v2")
        return VersionedModel(name: "Recipes", versions: [v1, v2], currentVersionName: "v2", path: "recipes", format: .native)
    }

    static func plan(_ model: VersionedModel, mode: PlanMode, surroundings: StoreSurroundings = StoreSurroundings()) throws -> MigrationPlan {
        let hashes = VersionHash.hashes(of: model.versions[0])
        let metadata = StoreMetadata(modelName: model.name, versionName: "v1", modelHash: hashes.model, entityHashes: hashes.entities, versionIdentifiers: [])
        var snapshot = StoreSnapshot(store: "s", schemaExists: true, metadata: metadata)
        snapshot.surroundings = surroundings
        return try Planner.plan(model: model, snapshot: snapshot, mode: mode)
    }

    @Test func aLightweightStepRunsInPlaceOfflineAndInPhasesOnlineUnderOneDigest() throws {
        let model = try Self.recipes()
        let offline = try #require(try Self.plan(model, mode: .offline).steps.first)
        let online = try #require(try Self.plan(model, mode: .online).steps.first)
        #expect(try Self.plan(model, mode: .offline).mode == .offline && Self.plan(model, mode: .online).mode == .online)
        #expect(offline.body == .inPlace)
        let phases = try #require(online.phases)
        #expect(phases.refusals.isEmpty && phases.phases.contains { $0.execution == .batches })
        #expect(offline.statements == online.statements)
        #expect(offline.digest == online.digest && offline.earlierDigests == online.earlierDigests)
        // The digest hashes the online form too: it is the full step's, as before the modes.
        let full = try LightweightFixtures.step(
            "Recipe: {attributes: {name: string, rating: int16}}",
            "Recipe: {attributes: {name: string, rating: {type: int16, optional: false, default: 0}}}"
        )
        #expect(full.phases != nil)
        #expect(offline.onlineRefusals.map(\.code) == [.onlineUnsupportedNotPlanned])
        #expect(online.onlineRefusals.isEmpty)
    }

    @Test func offlineTheStepAnInterruptedOnlineRunLeftIsPhased() throws {
        var left = StoreSurroundings()
        left.onlineRunLeft = OnlineRunLeft(from: "v1", to: "v2")
        let step = try #require(try Self.plan(Self.recipes(), mode: .offline, surroundings: left).steps.first)
        #expect(step.phases != nil, "plain apply finishes the online run rather than run offline statements over it")
    }

    @Test func aHeavyweightStepRunsItsCatchUpRoundsOnlyOnline() throws {
        let offline = try #require(try Planner.plan(model: K.model, snapshot: Self.kitchenSnapshot(), explicitMappings: [K.mapping]).steps.first?.staged)
        let online = try #require(try Planner.plan(model: K.model, snapshot: Self.kitchenSnapshot(), explicitMappings: [K.mapping], mode: .online).steps.first)
        let onlineWork = try #require(online.staged)
        #expect(!offline.runsOnline && onlineWork.runsOnline)
        // The catch-up form stays offline: plain apply finishes a staging schema an online run left.
        #expect(offline.catchUp != nil && offline.catchUp == onlineWork.catchUp)
        let offlineStep = try #require(try Planner.plan(model: K.model, snapshot: Self.kitchenSnapshot(), explicitMappings: [K.mapping]).steps.first)
        #expect(offlineStep.digest == online.digest)
    }

    static func kitchenSnapshot() -> StoreSnapshot {
        let version = K.model.version(named: "Kitchen 1")!
        let hashes = VersionHash.hashes(of: version)
        let metadata = StoreMetadata(modelName: "Kitchen", versionName: "Kitchen 1", modelHash: hashes.model, entityHashes: hashes.entities, versionIdentifiers: [])
        return StoreSnapshot(store: "shop", schemaExists: true, metadata: metadata)
    }

    @Test func whatTheApplicationBuiltOnATableAnOnlineStepRebuildsIsNamedInThePlan() {
        var online = OnlinePlan(phases: [], refusals: [])
        online.rebuiltTables = ["animal"]
        let plan = MigrationPlan(
            store: "shop", modelName: "m", targetVersion: "v2", targetModelHash: "", currentVersion: "v2", storeVersion: "v1",
            storeModelHash: nil, storeVersionIsRecordedOnly: false, status: .migrationRequired,
            steps: [PlannedStep(body: .phased(online), from: "v1", to: "v2", statements: [])], blockerDetails: []
        )
        var facts = StoreSurroundings()
        facts.dependents = [StoreDependent(object: "view public.names", table: "animal"), StoreDependent(object: "view public.toys", table: "toy")]
        #expect(facts.dependentsOfRebuiltTables(of: plan) == ["view public.names on shop.animal (step 1 of 1 rebuilds shop.animal)"])
        var offline = plan
        offline.steps[0].body = .inPlace
        #expect(facts.dependentsOfRebuiltTables(of: offline).isEmpty, "a step altered in place keeps the tables the view reads")
    }
}
