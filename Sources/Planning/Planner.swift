import ObjectModel

/// Computes the plan for a store from (store snapshot, model versions). Pure: `plan` prints
/// this value and `apply` runs it.
public enum Planner {
    /// 1. Same hashes as the target: nothing to do.
    /// 2. No store: one `create` step.
    /// 3. Otherwise find the store's version by hash, in the files, else in the database's
    ///    record; none: an error naming the store's hash.
    /// 4. A path to the target: not available yet (migrations are planned by later work), so
    ///    the plan says migration is required and lists why it cannot run.
    public static func plan(
        model: VersionedModel, targetVersion: String? = nil, snapshot: StoreSnapshot,
        recordedVersions: [RecordedVersion] = []
    ) throws -> MigrationPlan {
        let targetName = targetVersion ?? model.currentVersionName
        guard let target = model.version(named: targetName) else {
            throw PlanningError.unknownTargetVersion(name: targetName, available: model.versions.map(\.name))
        }
        let targetHashes = VersionHash.hashes(of: target)
        var plan = MigrationPlan(
            store: snapshot.store, modelName: model.name, targetVersion: target.name,
            targetModelHash: targetHashes.model, currentVersion: model.currentVersionName,
            storeVersion: nil, storeModelHash: snapshot.metadata?.modelHash,
            storeVersionIsRecordedOnly: false, status: .missing, steps: [], blockers: []
        )
        guard let metadata = snapshot.metadata else {
            if snapshot.schemaExists { throw PlanningError.schemaWithoutMetadata(store: snapshot.store) }
            let layout = StoreLayout(version: target, schema: snapshot.store)
            plan.steps = [PlannedStep(kind: .create, from: nil, to: target.name, statements: CreateStore.statements(for: layout))]
            return plan
        }
        if metadata.modelHash == targetHashes.model {
            plan.storeVersion = target.name
            plan.status = .upToDate
            return plan
        }
        if let source = model.versions.first(where: { VersionHash.hashes(of: $0).model == metadata.modelHash }) {
            plan.storeVersion = source.name
        } else if let recorded = recordedVersions.first(where: { $0.modelHash == metadata.modelHash }) {
            plan.storeVersion = recorded.name
            plan.storeVersionIsRecordedOnly = true
        } else {
            throw PlanningError.unknownStoreVersion(store: snapshot.store, modelHash: metadata.modelHash)
        }
        plan.status = .migrationRequired
        plan.blockers = [
            "migration required from '\(plan.storeVersion!)' to '\(target.name)': this release plans no migrations yet (lightweight and heavyweight migrations come next)",
        ]
        return plan
    }
}
