import SQLBuilding

extension StoreSurroundings {
    /// Store names ending like the schemas made beside a store are refused: `x~` would be the
    /// backup of `x`, `x~staging` its staging schema.
    public static let reservedSuffixes = ["~", "~staging", "~retired"]

    /// Why `schema` cannot be dropped or replaced as the `role` schema of `store`; nil when it
    /// does not exist or is recorded as exactly that.
    public static func conflict(_ schema: String, role: StoreSchemaRole, store: String, neighbour: NeighbourSchema) -> String? {
        let name = quoteIdentifier(schema)
        if neighbour.isStore {
            return "schema \(name), which would be the \(role.description) of store \(store), is a store of its own; nothing was changed (give one of the two stores another name)"
        }
        guard neighbour.present, neighbour.record != NeighbourSchema.Record(store: store, role: role) else { return nil }
        return "schema \(name) exists and was not made by orchestrator as the \(role.description) of store \(store); it is never dropped or replaced, and nothing was changed (rename or drop it yourself if it is not needed)"
    }

    /// Why a missing store cannot be created under its name; nil when it can.
    public func nameConflict(store: String) -> String? {
        if let suffix = Self.reservedSuffixes.first(where: store.hasSuffix) {
            return "store name \(store) ends with '\(suffix)', which orchestrator keeps for the schemas it makes beside a store (<store>~, <store>~staging, <store>~retired); choose another name"
        }
        if let other = storesInDerivedPlaces.min() {
            return "store name \(store) would have its backup and staging schemas where store \(other) is; choose another name"
        }
        guard let record = nameRecordedAs else { return nil }
        return "store name \(store) is the \(record.role?.description ?? "schema") of store \(record.store); choose another name"
    }

    /// Why the plan cannot run, from what is beside the store: a store name that collides with
    /// the schemas made beside stores; a schema in the place of one of a heavyweight step's that
    /// is not its own (`apply` checks again under the store's lock, and right before each drop
    /// or rename); what the application built on tables a heavyweight step replaces.
    func blockers(of plan: MigrationPlan) -> [Blocker] {
        if plan.status == .missing {
            return nameConflict(store: plan.store).map { [Blocker(.storeNameConflict, $0)] } ?? []
        }
        var blockers: [Blocker] = []
        for step in plan.steps where recordsSchemas {
            guard let work = step.staged else { continue }
            let old = work.oldStorePlace(store: plan.store)
            for (schema, role) in [(work.stagingSchema, StoreSchemaRole.staging), old] {
                let neighbour = neighbours[schema] ?? NeighbourSchema(present: false, isStore: false, record: nil)
                if let reason = Self.conflict(schema, role: role, store: plan.store, neighbour: neighbour) {
                    let blocker = Blocker(.foreignSchema, reason)
                    if !blockers.contains(blocker) { blockers.append(blocker) }
                }
            }
        }
        guard plan.status == .migrationRequired else { return blockers }
        for (index, step) in plan.steps.enumerated() where !step.passes.isEmpty {
            for dependent in dependents {
                let found = "\(dependent.object) on \(plan.store).\(dependent.table) (step \(index + 1) of \(plan.steps.count) replaces every table of \(plan.store))"
                blockers.append(Blocker(.dependentObjects, "\(found): drop it before migrating and create it again after (docs/store-format.md, \"What the application added\")"))
            }
        }
        return blockers
    }

    /// What the application built on the tables the plan's online steps rebuild (a heavyweight
    /// step's are blockers: `blockers(of:)`).
    func dependentsOfRebuiltTables(of plan: MigrationPlan) -> [String] {
        guard plan.status == .migrationRequired else { return [] }
        var found: [String] = []
        for (index, step) in plan.steps.enumerated() {
            guard let rebuilt = step.phases?.rebuiltTables, !rebuilt.isEmpty else { continue }
            let what = "rebuilds " + rebuilt.map { "\(plan.store).\($0)" }.joined(separator: ", ")
            for dependent in dependents where rebuilt.contains(dependent.table) {
                found.append("\(dependent.object) on \(plan.store).\(dependent.table) (step \(index + 1) of \(plan.steps.count) \(what))")
            }
        }
        return found
    }

    /// Passes an earlier, interrupted `apply` of this same step committed in its staging
    /// schema: 0 without the schema, or when another step's passes are recorded (which `apply`
    /// then refuses).
    func passesDone(of step: PlannedStep) -> Int {
        guard let staging = step.staged?.stagingSchema, neighbours[staging]?.present == true, !passesCommitted.isEmpty else { return 0 }
        let accepted = Set([step.digest] + step.earlierDigests + [""])
        guard passesCommitted.allSatisfy({ accepted.contains($0.stepDigest) }) else { return 0 }
        return passesCommitted.filter { $0.pass > 0 }.count
    }

    /// The first heavyweight step of a plan continues what its staging schema holds (an
    /// interrupted run of it; any other is a mismatch), unless `restart`; a later one starts
    /// afresh: the swap of the one before took the staging schema away.
    func resume(of step: PlannedStep, isFirst: Bool, restart: Bool) -> StagingResume {
        guard isFirst, let staging = step.staged?.stagingSchema else { return .decided(.fresh) }
        do {
            return .decided(try ResumeDecision.decide(
                staging: staging, fingerprint: step.digest, accepted: Set(step.earlierDigests + [""]),
                stagingExists: neighbours[staging]?.present == true, restart: restart, earlier: earlierRun
            ))
        } catch {
            return .mismatch(error)
        }
    }
}
