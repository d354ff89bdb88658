import Mapping
import ObjectModel

/// Computes the plan for a store from (store snapshot, model versions). Pure: `plan` prints
/// this value and `apply` runs it.
public enum Planner {
    /// 1. Same hashes as the target: nothing to do.
    /// 2. No store: one `create` step.
    /// 3. Otherwise find the store's version by hash among the usable versions in the files,
    ///    else in the database's record; none: an error naming the store's hash and the
    ///    versions that could not be compared. A version on the way to the target that cannot
    ///    be used is a blocker.
    /// 4. A path to the target: each explicit mapping model between versions on the way is a
    ///    heavyweight step (inferring past it would silently skip the transformation it
    ///    defines), the stretches between them lightweight steps, inferred directly or through
    ///    the versions in between (`LightweightPath`); none, and the blockers say why. A version
    ///    found only in the database's record has no definition here to infer from.
    /// 5. What is beside the store (`StoreSurroundings`) adds its blockers, and each
    ///    heavyweight step the passes an interrupted `apply` of it committed: how many, and
    ///    whether it continues them (`StoreSurroundings.resume`), which its phases, laid out
    ///    with the mode's form in step 6 (`HeavyweightPhase.planned`), mark done.
    /// 6. Each step keeps the form it runs in `mode` (`PlannedStep.planned(for:)`): offline, a
    ///    lightweight step runs in place, but for the first one when an interrupted
    ///    `apply --online` left its run (the run's checkpoint decides whether it may go on).
    ///    Online, what a rebuilt table loses (the application's objects on it, the team's
    ///    columns holding values) is named.
    public static func plan(
        model: VersionedModel, targetVersion: String? = nil, snapshot: StoreSnapshot,
        recordedVersions: [RecordedVersion] = [], explicitMappings: [ExplicitMapping] = [],
        options: PlanningOptions = PlanningOptions(), mode: PlanMode = .offline
    ) throws -> MigrationPlan {
        var plan = try planOfSteps(
            model: model, targetVersion: targetVersion, snapshot: snapshot, recordedVersions: recordedVersions,
            explicitMappings: explicitMappings, options: options
        )
        plan.blockerDetails += snapshot.surroundings.blockers(of: plan)
        if plan.status == .migrationRequired {
            plan.blockerDetails += snapshot.replication.syncBlockers(store: plan.store)
            let firstHeavyweight = plan.steps.firstIndex { $0.kind == .heavyweight }
            for index in plan.steps.indices {
                guard case .staged(var work) = plan.steps[index].body else { continue }
                work.passesDone = snapshot.surroundings.passesDone(of: plan.steps[index])
                work.resume = snapshot.surroundings.resume(of: plan.steps[index], isFirst: index == firstHeavyweight, restart: options.restart)
                plan.steps[index].body = .staged(work)
            }
        }
        plan.blockerDetails += snapshot.surroundings.expansionBlockers(of: plan)
        if mode == .expand { plan = ExpandPlanning.expanded(plan, model: model, surroundings: snapshot.surroundings, explicitMappings: explicitMappings) }
        let continued = snapshot.surroundings.onlineRunLeft == nil ? nil : plan.steps.firstIndex { $0.kind == .lightweight }
        for index in plan.steps.indices {
            let step = plan.steps[index].planned(for: mode, continuesOnlineRun: index == continued)
            // A heavyweight step expanded waits for `complete` as a postponed one waits for the proceed.
            let postponed = options.postponesSwitchOver || step.staged?.newVersionViews != nil
            plan.steps[index] = HeavyweightPhase.laidOut(step, store: plan.store, postponed: postponed)
            if mode.runsOnline, options.postponesSwitchOver, case .phased(var online) = plan.steps[index].body {
                online.waitsToSwitchOver = true
                plan.steps[index].body = .phased(online)
            }
        }
        if mode.runsOnline {
            plan.dependentsOfRebuiltTables = snapshot.surroundings.dependentsOfRebuiltTables(of: plan)
            if plan.status == .migrationRequired { ExtraObject.rebuildHazards(of: snapshot.extraObjects, steps: &plan.steps, store: plan.store) }
        }
        plan.mode = mode
        return plan
    }

    private static func planOfSteps(
        model: VersionedModel, targetVersion: String?, snapshot: StoreSnapshot,
        recordedVersions: [RecordedVersion], explicitMappings: [ExplicitMapping], options: PlanningOptions
    ) throws -> MigrationPlan {
        let targetName = targetVersion ?? model.currentVersionName
        let targetProblems = model.problems(ofVersion: targetName)
        if !targetProblems.isEmpty { throw PlanningError.unusableTargetVersion(UnusableVersion(name: targetName, issues: targetProblems)) }
        guard let target = model.version(named: targetName) else {
            throw PlanningError.unknownTargetVersion(name: targetName, available: model.versionNames)
        }
        let targetHashes = VersionHash.hashes(of: target)
        var plan = MigrationPlan(
            store: snapshot.store, modelName: model.name, targetVersion: target.name,
            targetModelHash: targetHashes.model, currentVersion: model.currentVersionName,
            storeVersion: nil, storeModelHash: snapshot.metadata?.modelHash,
            storeVersionIsRecordedOnly: false, status: .missing, steps: [], blockerDetails: []
        )
        guard let metadata = snapshot.metadata else {
            if snapshot.schemaExists { throw PlanningError.schemaWithoutMetadata(store: snapshot.store) }
            let layout = StoreLayout(version: target, schema: snapshot.store)
            let hazards = [snapshot.lockTable?.hazard(creating: layout)].compactMap { $0 }
            plan.steps = [PlannedStep(body: .create, from: nil, to: target.name, statements: CreateStore.statements(for: layout), hazards: hazards)]
            return plan
        }
        let match = StoreVersionMatch(
            storeModelHash: metadata.modelHash, storeVersionName: metadata.versionName, targetModelHash: targetHashes.model, target: target,
            model: model, recordedVersions: recordedVersions
        )
        if match.isCompatible && !match.indexesDiffer {
            plan.storeVersion = target.name
            plan.status = .upToDate
            return plan
        }
        guard let storeVersion = match.versionName else {
            throw PlanningError.unknownStoreVersion(store: snapshot.store, modelHash: metadata.modelHash, unusableVersions: match.notCompared)
        }
        plan.storeVersion = storeVersion
        plan.storeVersionIsRecordedOnly = match.isRecordedOnly
        plan.status = .migrationRequired
        guard let source = model.version(named: plan.storeVersion!), !plan.storeVersionIsRecordedOnly else {
            let name = plan.storeVersion!
            let problems = model.versionNames.contains(name) ? model.problems(ofVersion: name) : []
            plan.blockerDetails = !problems.isEmpty
                ? problems.map { Blocker(.storeVersionUnusable, "the store is at '\(name)', whose file cannot be used: \($0)") }
                : [Blocker(
                    .storeVersionRecordedOnly,
                    "the store is at '\(name)', a version known only from the database's record of applied versions; migrations are inferred from versions in the model's files (add '\(name)' back to them)"
                )]
            return plan
        }
        // A version on the way that cannot be used may hold a step's mapping: never go around it.
        let broken = model.unusableVersions(from: source.name, to: target.name)
        if !broken.isEmpty {
            plan.blockerDetails = broken.flatMap { version in
                version.issues.map {
                    Blocker(.versionOnTheWayUnusable, "the way from '\(source.name)' to '\(target.name)' goes through '\(version.name)', which cannot be used: \($0)")
                }
            }
            return plan
        }
        plan.keptBackup = snapshot.unfinishedChainBackup
        switch steps(
            model: model, from: source, to: target, schema: snapshot.store, explicitMappings: explicitMappings, options: options,
            rowEstimates: snapshot.rowEstimates, backupKept: snapshot.unfinishedChainBackup != nil, extras: snapshot.extraObjects
        ) {
        case .success(let steps): plan.steps = steps.map { $0.estimated(by: snapshot.rowEstimates) }
        case .failure(let blockers): plan.blockerDetails = blockers.reasons
        }
        plan.replication = snapshot.replication
        for index in plan.steps.indices {
            let step = plan.steps[index]
            guard let from = step.from.flatMap(model.version(named:)), let to = model.version(named: step.to) else { continue }
            plan.steps[index].hazards += ReplicationHazards.hazards(
                of: step, source: StoreLayout(version: from, schema: snapshot.store), destination: StoreLayout(version: to, schema: snapshot.store),
                topology: snapshot.replication
            )
        }
        return plan
    }
}

/// Choices that change the heavyweight steps of a plan.
public struct PlanningOptions: Sendable, Hashable {
    /// Names of the custom entity migration policies the running program registered; a mapping
    /// model naming any other is a blocker.
    public var registeredPolicies: Set<String>
    /// Run every entity mapping through the streaming path, as one with a policy would.
    public var forceStreaming: Bool
    /// Keep the old store as `<store>~` after a heavyweight step (Core Data's backup).
    public var keepBackup: Bool
    /// The hooks each registered policy declares it implements; one not here declared none,
    /// and runs again whole under the write guard of `apply --online`.
    public var policyHooks: [String: Set<PolicyHook>]
    /// Policies that run their hooks over the whole entity mapping once per catch-up round of
    /// `apply --online`; others declaring such hooks, or none, run again whole under the write
    /// guard (docs/online-migrations.md).
    public var perRoundPolicies: Set<String> = []
    /// `apply --restart`: a heavyweight step discards what an interrupted run left in its
    /// staging schema and starts afresh.
    public var restart = false
    /// `--postpone-switch-over`: an online heavyweight step plans the wait for `orchestrator
    /// control proceed` before its write guard, which `plan --online` shows.
    public var postponesSwitchOver = false

    public init(
        registeredPolicies: Set<String> = [], forceStreaming: Bool = false, keepBackup: Bool = true, policyHooks: [String: Set<PolicyHook>] = [:],
        perRoundPolicies: Set<String> = []
    ) {
        self.policyHooks = policyHooks
        self.perRoundPolicies = perRoundPolicies
        self.registeredPolicies = registeredPolicies
        self.forceStreaming = forceStreaming
        self.keepBackup = keepBackup
    }
}

/// A mapping model found for the model: which versions it maps between, its file, and the
/// model itself when the caller loaded it (without it, the planner can only stop there).
public struct ExplicitMapping: Sendable, Hashable {
    public var source: String
    public var destination: String
    public var file: String
    public var mappingModel: MappingModel?

    public init(source: String, destination: String, file: String, mappingModel: MappingModel? = nil) {
        self.source = source
        self.destination = destination
        self.file = file
        self.mappingModel = mappingModel
    }

    public init(_ mappingModel: MappingModel) {
        self.init(source: mappingModel.source, destination: mappingModel.destination, file: mappingModel.file, mappingModel: mappingModel)
    }
}

extension Planner {
    /// Steps from `source` to `target`: the explicit mappings on the way in model order, each a
    /// heavyweight step, joined by lightweight paths. Overlapping mapping models, or one that is
    /// not at hand or needs Swift, are blockers.
    static func steps(
        model: VersionedModel, from source: ModelVersion, to target: ModelVersion, schema: String, explicitMappings: [ExplicitMapping],
        options: PlanningOptions, rowEstimates: RowEstimates = RowEstimates(), backupKept: Bool = false, extras: [ExtraObject] = []
    ) -> Result<[PlannedStep], LightweightPath.Blockers> {
        func index(_ name: String) -> Int? { model.versions.firstIndex { $0.name == name } }
        guard let start = index(source.name), let end = index(target.name) else { preconditionFailure("versions of a plan come from its model") }
        // A mapping model from the store's version straight to the target is the direct step,
        // whatever lies between (Core Data's rule): explicit, so it is never inferred past.
        let direct = explicitMappings.filter { $0.source == source.name && $0.destination == target.name }
        let onTheWay = direct.count == 1 ? direct : explicitMappings.filter { mapping in
            guard let from = index(mapping.source), let to = index(mapping.destination) else { return false }
            return start <= from && to <= end && from < to
        }.sorted { (index($0.source)!, index($0.destination)!) < (index($1.source)!, index($1.destination)!) }
        var steps: [PlannedStep] = []
        var reasons: [Blocker] = []
        var current = source
        for mapping in onTheWay {
            let from = model.versions[index(mapping.source)!], to = model.versions[index(mapping.destination)!]
            guard index(from.name)! >= index(current.name)! else {
                reasons.append(Blocker(
                    .overlappingMappingModels,
                    "'\(mapping.source)' -> '\(mapping.destination)' (\(mapping.file)) overlaps another mapping model on the way to '\(target.name)'; keep one"
                ))
                continue
            }
            if from.name != current.name {
                switch LightweightPath.steps(model: model, from: current, to: from, schema: schema) {
                case .success(let lightweight): steps += lightweight
                case .failure(let blockers): reasons += blockers.reasons
                }
            }
            guard let mappingModel = mapping.mappingModel else {
                reasons.append(Blocker(
                    .mappingModelNotLoaded,
                    "'\(mapping.source)' -> '\(mapping.destination)' has an explicit mapping model (\(mapping.file)), which was not loaded for planning; inferring past it would skip the transformation it defines"
                ))
                current = to
                continue
            }
            do {
                // The backup is the store as it was before this run: a later heavyweight step's
                // old store is an intermediate version, dropped rather than kept. So is every
                // step's when an earlier run of the chain made the backup and did not finish.
                // The team's own objects stay in the store until the first heavyweight step
                // builds a new one without them (lightweight steps keep them).
                let isFirst = !steps.contains { $0.kind == .heavyweight }
                let keepsBackup = options.keepBackup && !backupKept && isFirst
                steps.append(try HeavyweightMigration.step(
                    mapping: mappingModel, from: from, to: to, schema: schema, options: options, keepsBackup: keepsBackup,
                    rowEstimates: rowEstimates, extras: isFirst ? extras : []
                ))
            } catch {
                reasons += error.reasons.map { Blocker(.mappingModelRefused, $0) }
            }
            current = to
        }
        if current.name != target.name {
            switch LightweightPath.steps(model: model, from: current, to: target, schema: schema) {
            case .success(let lightweight): steps += lightweight
            case .failure(let blockers): reasons += blockers.reasons
            }
        }
        return reasons.isEmpty ? .success(steps) : .failure(LightweightPath.Blockers(reasons: reasons))
    }
}
