import Testing
import ObjectModel
@testable import Planning

/// A version that cannot be used stops a plan only when the plan needs it: as its target, as the
/// store's version, or on the way between them.
@Suite struct UnusableVersionPlanningTests {
    static func version(_ name: String, _ yaml: String) throws -> ModelVersion {
        try NativeModelLoader.parseVersion(yaml, name: name, file: "shop/\(name).yaml")
    }

    /// v1 and v3, v4 are good; v2 could not be read; v5 (with `withInvalid`) fails validation.
    static func model(withInvalid: Bool = false) throws -> VersionedModel {
        let unreadable = UnusableVersion(name: "v2", issues: [ModelIssue(file: "shop/v2.yaml", line: 3, message: "malformed YAML: did not find expected ',' or ']'")])
        var versions = [
            try version("v1", "entities:\n  Item:\n    attributes:\n      name: string\n"),
            try version("v3", "entities:\n  Item:\n    attributes:\n      name: string\n      note: string\n"),
            try version("v4", "entities:\n  Item:\n    attributes:\n      title: {type: string, renamingIdentifier: name}\n      note: string\n"),
        ]
        var names = ["v1", "v2", "v3", "v4"]
        if withInvalid {
            versions.append(try version("v5", "entities:\n  Item:\n    relationships:\n      owner: {destination: Owner}\n"))
            names.append("v5")
        }
        return VersionedModel(
            name: "Shop", versions: versions, currentVersionName: "v4", path: "shop", format: .native,
            unusableVersions: [unreadable], versionNames: names
        )
    }

    static func snapshot(at version: ModelVersion) -> StoreSnapshot {
        let hashes = VersionHash.hashes(of: version)
        return StoreSnapshot(store: "shop", schemaExists: true, metadata: StoreMetadata(
            modelName: "Shop", versionName: version.name, modelHash: hashes.model, entityHashes: hashes.entities, versionIdentifiers: []
        ))
    }

    @Test func aStoreBeyondAnUnreadableVersionMigratesPastIt() throws {
        let model = try Self.model()
        let plan = try Planner.plan(model: model, snapshot: Self.snapshot(at: model.version(named: "v3")!))
        #expect(plan.storeVersion == "v3")
        #expect(plan.isExecutable, "\(plan.blockers)")
        #expect(plan.steps.map(\.kind) == [.lightweight])
    }

    @Test func aWayThroughAnUnreadableVersionIsBlockedNamingItsFile() throws {
        let model = try Self.model()
        let plan = try Planner.plan(model: model, snapshot: Self.snapshot(at: model.version(named: "v1")!))
        #expect(plan.steps.isEmpty)
        #expect(plan.blockers == [
            "the way from 'v1' to 'v4' goes through 'v2', which cannot be used: shop/v2.yaml:3: malformed YAML: did not find expected ',' or ']'",
        ])
    }

    @Test func aTargetThatFailsValidationIsAnErrorNamingItsFile() throws {
        let model = try Self.model(withInvalid: true)
        let error = #expect(throws: PlanningError.self) {
            try Planner.plan(model: model, targetVersion: "v5", snapshot: Self.snapshot(at: model.version(named: "v4")!))
        }
        #expect(error?.description == "version 'v5' cannot be used: shop/v5.yaml: entity Item, property owner: destination entity 'Owner' does not exist")
    }

    @Test func aStoreMatchingOnlyAVersionThatFailsValidationIsUnknownAndTheErrorSaysWhy() throws {
        let model = try Self.model(withInvalid: true)
        let error = #expect(throws: PlanningError.self) {
            try Planner.plan(model: model, targetVersion: "v4", snapshot: Self.snapshot(at: model.version(named: "v5")!))
        }
        let lines = error?.description.split(separator: "\n").map(String.init) ?? []
        #expect(lines.first?.hasPrefix("store 'shop' has model hash \(VersionHash.hashes(of: model.version(named: "v5")!).model), which matches no version") == true)
        #expect(Array(lines.dropFirst()) == [
            "version 'v2' could not be compared, it cannot be used: shop/v2.yaml:3: malformed YAML: did not find expected ',' or ']'",
            "version 'v5' could not be compared, it cannot be used: shop/v5.yaml: entity Item, property owner: destination entity 'Owner' does not exist",
        ])
    }

    @Test func aStoreRecordedAtAnUnreadableVersionIsBlockedNamingItsFile() throws {
        let model = try Self.model()
        var snapshot = Self.snapshot(at: model.version(named: "v1")!)
        snapshot.metadata?.modelHash = String(repeating: "cd", count: 32)
        let plan = try Planner.plan(model: model, snapshot: snapshot, recordedVersions: [RecordedVersion(name: "v2", modelHash: String(repeating: "cd", count: 32))])
        #expect(plan.storeVersion == "v2")
        #expect(plan.blockers == ["the store is at 'v2', whose file cannot be used: shop/v2.yaml:3: malformed YAML: did not find expected ',' or ']'"])
    }
}
