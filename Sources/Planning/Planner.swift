import ObjectModel

/// Computes the plan for a store from (store snapshot, model versions). Pure: `plan` prints
/// this value and `apply` runs it.
public enum Planner {
    /// 1. Same hashes as the target: nothing to do.
    /// 2. No store: one `create` step.
    /// 3. Otherwise find the store's version by hash, in the files, else in the database's
    ///    record; none: an error naming the store's hash.
    /// 4. An explicit mapping model between versions on the way: inferring past it would
    ///    silently skip the data transformation it defines, and heavyweight migrations are not
    ///    run yet, so it is a blocker.
    /// 5. A path to the target: lightweight steps, inferred directly or through the versions in
    ///    between (`LightweightPath`); none, and the blockers say why. A version found only in
    ///    the database's record has no definition here to infer from.
    public static func plan(
        model: VersionedModel, targetVersion: String? = nil, snapshot: StoreSnapshot,
        recordedVersions: [RecordedVersion] = [], explicitMappings: [ExplicitMapping] = []
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
        guard let source = model.version(named: plan.storeVersion!), !plan.storeVersionIsRecordedOnly else {
            plan.blockers = [
                "the store is at '\(plan.storeVersion!)', a version known only from the database's record of applied versions; migrations are inferred from versions in the model's files (add '\(plan.storeVersion!)' back to them)",
            ]
            return plan
        }
        let onTheWay = explicitMappings.filter { mapping in
            guard let from = model.versions.firstIndex(where: { $0.name == mapping.source }),
                  let to = model.versions.firstIndex(where: { $0.name == mapping.destination }),
                  let start = model.versions.firstIndex(where: { $0.name == source.name }),
                  let end = model.versions.firstIndex(where: { $0.name == target.name }) else { return false }
            return start <= from && to <= end && from < to
        }
        if !onTheWay.isEmpty {
            plan.blockers = onTheWay.map { mapping in
                "'\(mapping.source)' -> '\(mapping.destination)' has an explicit mapping model (\(mapping.file)); inferring past it would skip the transformation it defines, and this release does not run mapping models yet"
            }
            return plan
        }
        switch LightweightPath.steps(model: model, from: source, to: target, schema: snapshot.store) {
        case .success(let steps): plan.steps = steps
        case .failure(let blockers): plan.blockers = blockers.reasons
        }
        return plan
    }
}

/// A mapping model found for the model: which versions it maps between, and its file.
public struct ExplicitMapping: Sendable, Hashable {
    public var source: String
    public var destination: String
    public var file: String

    public init(source: String, destination: String, file: String) {
        self.source = source
        self.destination = destination
        self.file = file
    }
}
