import Foundation
import ObjectModel
import Planning
import PostgresClient

/// Runs plans against PostgreSQL under the store's advisory lock.
public struct StoreMigrator {
    public var connection: PostgresConnection
    public var model: VersionedModel
    public var store: String
    public var targetVersion: String?

    /// Mapping models found for the model; each on the way runs as a heavyweight step, never
    /// inferred past.
    public var explicitMappings: [ExplicitMapping]
    /// Custom entity migration policies, by the names mapping models give them.
    public var policies: PolicyRegistry = .shared
    /// Run every entity mapping of a heavyweight step through the streaming path.
    public var forceStreaming = false
    /// Keep the old store as `<store>~` after a heavyweight step.
    public var keepBackup = true
    /// The drift checks' contracts: the process's (`ContractCatalogs.shared`) unless given, so
    /// `apply`'s plan before the store's lock and its plan under it build the contract once, and
    /// so do all the migrators of one process on servers that print it alike.
    public var contracts: ContractCatalogs = .shared
    /// `fleet apply`: what its survey found of the store; while it still holds under the lock
    /// (`SurveyedCatalog.recheck`), the drift check's catalog read is left out, and so are the
    /// reads of its row estimates and replication topology.
    public var surveyedCatalog: SurveyedCatalog?

    public init(
        connection: PostgresConnection, model: VersionedModel, store: String, targetVersion: String? = nil,
        explicitMappings: [ExplicitMapping] = []
    ) {
        self.connection = connection
        self.model = model
        self.store = store
        self.targetVersion = targetVersion
        self.explicitMappings = explicitMappings
    }

    /// The plan for the store as it is now, for `apply` (`mode` offline) or `apply --online`,
    /// read without taking any lock or writing anything.
    /// Which metadata tables there are is read once per plan (`SessionFacts`, kept with the
    /// plan when the session keeps none).
    /// `restart` (`apply --restart`): a heavyweight step starts afresh over what an interrupted
    /// run left in its staging schema.
    /// `postponesSwitchOver` (`--postpone-switch-over`): an online heavyweight step plans its
    /// wait for `orchestrator control proceed`.
    public func plan(mode: PlanMode = .offline, postponesSwitchOver: Bool = false, restart: Bool = false) throws -> MigrationPlan {
        guard connection.sessionFacts == nil else { return try planKnowingFacts(mode: mode, postponesSwitchOver: postponesSwitchOver, restart: restart) }
        connection.sessionFacts = SessionFacts(keepsAbsence: true)
        defer { connection.sessionFacts = nil }
        return try planKnowingFacts(mode: mode, postponesSwitchOver: postponesSwitchOver, restart: restart)
    }

    private func planKnowingFacts(mode: PlanMode, postponesSwitchOver: Bool, restart: Bool) throws -> MigrationPlan {
        var snapshot = try StoreCatalog.snapshot(store: store, readingSurroundings: surveyedCatalog == nil, on: connection)
        // Online, a step may rebuild a table without the team's own columns on it.
        let needsExtraObjects = !keepBackup || snapshot.unfinishedChainBackup != nil || mode.runsOnline
        // The survey's extra tables and columns stand for the drift's while its fingerprint holds.
        let readsDrift = needsExtraObjects && surveyedCatalog?.extras == nil
        // An interrupted `apply --online` left its step half in the store, by design: its
        // checkpoint, which names the plan, decides whether the run may continue.
        let locked = try SurveyedCatalog.readUnderLock(surveyedCatalog, for: snapshot, needsExtraObjects: readsDrift, model: model.name, on: connection)
        let runLeft = try locked.map(\.runLeft) ?? OnlineCheckpoint.unfinished(store: store, on: connection)
        let survey = runLeft != nil ? SurveyedCatalog.Recheck()
            : try locked?.survey ?? SurveyedCatalog.recheck(surveyedCatalog, for: snapshot, needsExtraObjects: readsDrift, on: connection)
        if runLeft == nil, survey.catalogHolds, needsExtraObjects, let surveyedCatalog {
            snapshot.extraObjects = try surveyedCatalog.readExtraObjects(store: store, on: connection)
        } else if runLeft == nil, !survey.catalogHolds,
                  let drift = try DriftCheck.requireNoBlockingDrift(snapshot, model: model, on: connection, contracts: contracts),
                  needsExtraObjects {
            // Only then can a step drop the team's own objects (with the old store, a rebuilt table).
            snapshot.extraObjects = try ExtraObjectReader.read(drift, store: store, on: connection)
        }
        if surveyedCatalog != nil { try SurveyedCatalog.complete(&snapshot, from: survey, estimatesKept: explicitMappings.isEmpty, on: connection) }
        snapshot.surroundings = try surroundings(of: snapshot, mode: mode)
        snapshot.surroundings.onlineRunLeft = runLeft.map { OnlineRunLeft(from: $0.from, to: $0.to) }
        snapshot.surroundings.expansionInFlight = try locked.map { $0.expansion } ?? ExpansionRecord.read(store: store, on: connection)?.inFlight
        let recorded = try locked?.recorded ?? StoreCatalog.recordedVersions(model: model.name, on: connection)
        var options = PlanningOptions(
            registeredPolicies: policies.names, forceStreaming: forceStreaming, keepBackup: keepBackup, policyHooks: policies.declaredHooks,
            perRoundPolicies: policies.perRoundPolicies
        )
        options.restart = restart
        options.postponesSwitchOver = postponesSwitchOver
        return try Planner.plan(
            model: model, targetVersion: targetVersion, snapshot: snapshot, recordedVersions: recorded, explicitMappings: explicitMappings, options: options, mode: mode
        )
    }

    /// What Planning needs to know beside the store (`StoreSurroundings`): for a missing store,
    /// whether its name is free; when the plan may hold a heavyweight step (a mapping model
    /// given, the store not at the target), the schemas such a step makes, what the application
    /// built on the store's tables, and the passes an interrupted run committed. Online, what
    /// the application built on the store's tables also when no heavyweight step can come: a
    /// lightweight step may rebuild a table (`OnlinePlan.rebuiltTables`).
    private func surroundings(of snapshot: StoreSnapshot, mode: PlanMode) throws -> StoreSurroundings {
        guard let metadata = snapshot.metadata else {
            return snapshot.schemaExists ? StoreSurroundings() : try StoreSchemas.nameFacts(store: store, on: connection)
        }
        let target = model.version(named: targetVersion ?? model.currentVersionName)
        guard let target, VersionHash.hashes(of: target).model != metadata.modelHash else { return StoreSurroundings() }
        var found = StoreSurroundings()
        guard !explicitMappings.isEmpty else {
            if mode.runsOnline { found.dependents = try StoreDependents.dependents(of: store, tables: nil, on: connection) }
            return found
        }
        let staging = HeavyweightMigration.stagingSchema(for: store)
        found.recordsSchemas = try MetadataSchema.hasStoreSchemas(on: connection)
        found.neighbours = try StoreSchemas.neighbours(
            [staging, HeavyweightMigration.backupSchema(for: store), HeavyweightMigration.retiredSchema(for: store)], on: connection
        )
        found.dependents = try StoreDependents.dependents(of: store, tables: nil, on: connection)
        if found.neighbours[staging]?.present == true {
            found.passesCommitted = try PassCheckpoints.committed(store: store, staging: staging, on: connection)
            found.earlierRun = try PassCheckpoints.earlierRun(store: store, on: connection)
        }
        return found
    }

    /// 1. Plan without writing anything (but what a crash or a deferred cleanup after a
    ///    heavyweight swap left, `StoreCleanup.removeLeftovers`): a store of an unknown version, a schema that is not a
    ///    store, a plan that cannot run or one that loses data without `allowDataLoss` stops
    ///    here, with the database untouched.
    /// 2. Make sure the metadata schema exists.
    /// 3. Take the store's advisory lock (waiting at most `lockWaitSeconds`, telling `onLockWait`
    ///    who holds it), then re-read the metadata and re-plan under it (another process may
    ///    have migrated the store meanwhile).
    /// 4. Run each step in one transaction with its metadata and history.
    ///
    /// With `options.expectedPlan` (`apply --plan`), the plans of steps 1 and 3 must be the
    /// saved one, or nothing is changed.
    public func apply(
        options: ApplyOptions = ApplyOptions(), onStep: (Int, Int, PlannedStep) -> Void = { _, _, _ in },
        onProgress: (ProgressEvent) -> Void = { _ in }, onLockWait: ([AdvisoryLockHolder]) -> Void = { _ in }
    ) throws -> ApplyReport {
        // What the session learns of the server once (a metadata table there, the lock table's
        // size: `SessionFacts`) holds for the whole `apply`, as for `fleet apply`'s sessions:
        // the plan before the lock, the bootstrap and the plan under it ask once. The store's
        // catalog and metadata are still read again under the lock.
        let keepsFacts = connection.sessionFacts == nil
        if keepsFacts { connection.sessionFacts = SessionFacts() }
        defer { if keepsFacts { connection.sessionFacts = nil } }
        let deferred = try StoreCleanup.removeLeftovers(
            store: store, on: connection, lockWaitSeconds: options.lockWaitSeconds, policy: options.executionPolicy, deferring: true, onLockWait: onLockWait
        )
        let preliminary = try plan(mode: options.planMode, postponesSwitchOver: options.postponeSwitchOver, restart: options.restart)
        try options.expectedPlan?.requireSame(as: preliminary, migrator: self, online: options.online, expand: options.expand)
        if preliminary.isUpToDate { return ApplyReport(plan: preliminary, appliedSteps: [], deferredCleanups: deferred) }
        guard preliminary.isExecutable else { throw NotExecutable(blockerDetails: preliminary.blockerDetails) }
        try DataLossNotAllowed.check(preliminary, options: options)
        try SubscriberAlone.check(preliminary, options: options)
        try AllTablesPublicationNotAllowed.check(preliminary, options: options)
        try OnlineNotSupported.check(preliminary)
        try MetadataSchema.bootstrap(on: connection)
        let lock = StoreLock(store: store, connection: connection)
        try lock.acquire(waitingAtMost: options.lockWaitSeconds, onWait: onLockWait)
        defer { lock.release() }
        return try applyHoldingLock(options: options, deferred: deferred, onStep: onStep, onProgress: onProgress)
    }

    /// Steps 3 and 4 of `apply`, the store's lock held: plan again (`planned`: already planned
    /// under this lock), check, run each step.
    func applyHoldingLock(
        options: ApplyOptions, planned: MigrationPlan? = nil, deferred: [DeferredCleanup] = [], onStep: (Int, Int, PlannedStep) -> Void = { _, _, _ in },
        onProgress: (ProgressEvent) -> Void = { _ in }
    ) throws -> ApplyReport {
        let plan = try planned ?? self.plan(mode: options.planMode, postponesSwitchOver: options.postponeSwitchOver, restart: options.restart)
        try options.expectedPlan?.requireSame(as: plan, migrator: self, online: options.online, expand: options.expand)
        try requireRunnable(plan, options: options)
        // What `status` shows of the run, from its first step to its end.
        var options = options
        let record = RunRecord(store: store, connection: connection)
        options.runRecord = record
        defer { record.end() }
        var applied: [AppliedStep] = []
        for (index, step) in plan.steps.enumerated() {
            onStep(index + 1, plan.steps.count, step)
            record.step(index + 1, of: plan.steps.count, kind: step.kind.rawValue, from: step.from, to: step.to)
            let event = ProgressEvent(
                kind: .stepStarted, step: index + 1, stepCount: plan.steps.count, stepKind: step.kind.rawValue,
                from: step.from, to: step.to, pass: 1, passCount: 1, stage: .step, rowsTotal: step.rowEstimate
            )
            onProgress(event)
            let done = try run(step, number: index + 1, of: plan.steps.count, plan: plan, options: options, onProgress: onProgress)
            applied.append(done)
            var finished = event
            finished.kind = .stepFinished
            finished.rowsDone = done.rows
            finished.elapsedSeconds = Double(done.durationMilliseconds) / 1000
            onProgress(finished)
        }
        return ApplyReport(plan: plan, appliedSteps: applied, deferredCleanups: deferred + applied.compactMap(\.deferredCleanup))
    }
}

extension StoreMigrator {
    /// Every refusal `apply` makes of `plan` under the store's lock before it changes anything:
    /// blockers, data loss without consent, a subscription target migrated alone, a step that
    /// cannot run online, what the application built on tables an online step rebuilds (extra
    /// columns such a rebuild drops are data loss, named by the plan). `apply --subscriber` asks it of each subscriber
    /// before the publisher changes (`ReplicatedApply`).
    func requireRunnable(_ plan: MigrationPlan, options: ApplyOptions) throws {
        guard plan.isExecutable else { throw NotExecutable(blockerDetails: plan.blockerDetails) }
        try DataLossNotAllowed.check(plan, options: options)
        try SubscriberAlone.check(plan, options: options)
        try AllTablesPublicationNotAllowed.check(plan, options: options)
        try OnlineNotSupported.check(plan)
        try StoreDependents.check(plan)
        try FleetExpansionWaiting.check(plan, options: options)
    }

    /// `apply` for a store of a fleet: the same steps and checks, but the plan is made once,
    /// under the store's lock. `apply` plans first without the lock so that a refused store
    /// leaves the database untouched; in a fleet the metadata schema is there already (the
    /// store is in it, and making it again is one query), and `fleet status` and `fleet plan`
    /// are the look before the leap.
    ///
    /// With `cohortPlan` (`fleet apply --plan`), the plan made under the lock must be the
    /// cohort's saved one, for this store's schema; else nothing is changed.
    func applyUnderLock(options: ApplyOptions, cohortPlan: CohortPlan? = nil) throws -> ApplyReport {
        var options = options
        options.inFleet = true
        let deferred = try StoreCleanup.removeLeftovers(
            store: store, on: connection, lockWaitSeconds: options.lockWaitSeconds, policy: options.executionPolicy, deferring: true, onLockWait: { _ in }
        )
        try MetadataSchema.bootstrap(on: connection)
        let lock = StoreLock(store: store, connection: connection)
        try lock.acquire(waitingAtMost: options.lockWaitSeconds, onWait: { _ in })
        defer { lock.release() }
        // Planned once under the lock: the plan checked against the cohort's is the one run.
        var planned: MigrationPlan?
        if let cohortPlan {
            let plan = try plan(mode: options.planMode, postponesSwitchOver: options.postponeSwitchOver, restart: options.restart)
            try cohortPlan.requireSame(as: plan, migrator: self, online: options.online, expand: options.expand)
            planned = plan
        }
        return try applyHoldingLock(options: options, planned: planned, deferred: deferred)
    }
}
