import ObjectModel

extension ExpandPlanning {
    /// `apply --expand` of a heavyweight step (docs/rolling-deploys.md, "Heavyweight steps"):
    /// the online step (passes, rounds, stage 3's build) whose switch-over waits for
    /// `complete`, the rounds carrying the old release's writes into the staging tables
    /// meanwhile. The old release keeps the store's tables, at its version; the new version is
    /// served read-only through `NewVersionViews`, created when the wait starts. A step that
    /// cannot run online is refused (`expandHeavyweight`, with the online refusal's reason).
    /// With a reverse mapping model among `explicitMappings` (from the new version to the old),
    /// the new version is written through it where it can be (`NewVersionWrites`).
    static func expandedHeavyweight(_ plan: MigrationPlan, work: StagedWork, model: VersionedModel, explicitMappings: [ExplicitMapping] = []) -> MigrationPlan {
        var plan = plan, work = work
        let step = plan.steps[0]
        if let refusal = work.refusal {
            plan.blockerDetails.append(Blocker(
                .expandHeavyweight,
                "'\(step.from ?? "")' -> '\(step.to)' is a heavyweight step that cannot run online, so it cannot be expanded: \(refusal)"
            ))
            return plan
        }
        guard let from = step.from.flatMap(model.version(named:)), let to = model.version(named: step.to) else { return plan }
        var views = NewVersionViews(store: plan.store, from: from, to: to, staging: work.stagingSchema)
        let forward = explicitMappings.first { $0.source == from.name && $0.destination == to.name }?.mappingModel
        if let reverse = explicitMappings.first(where: { $0.source == to.name && $0.destination == from.name })?.mappingModel,
           let forward, let resolved = try? HeavyweightMigration.resolved(forward, from: from, to: to) {
            // A reverse mapping model that does not resolve (an expression naming what the old
            // version lacks, a policy not registered) is bad input: refused, not served read-only.
            do {
                views.writes = try NewVersionWrites.planned(reverse: reverse, forward: resolved, old: from, new: to, newLayout: views.layout)
            } catch {
                plan.blockerDetails += error.reasons.map { Blocker(.mappingModelRefused, "the reverse mapping model, for apply --expand: \($0)") }
                return plan
            }
        }
        work.newVersionViews = views
        if views.writes != nil {
            work.writeGuard = PlannedStatement(
                "\(views.switchOverTurn.guardTakes); \(work.writeGuard.sql)", lock: work.writeGuard.lock,
                summary: "hold writes through \(views.schema) at their first step, then keep writes out of \(plan.store), until the new store is in place (held by a second session)"
            )
        }
        plan.steps[0].body = .staged(work)
        return plan
    }

    /// Whether `inFlight` is the heavyweight expansion `plan` continues (an `apply --expand`
    /// stopped while it waited for `complete`: its views serve the new version, and the plan
    /// is its one step): `apply --expand` then runs it again, which switches over once
    /// `complete` has given the proceed. Every other plan stays refused (`expandInFlight`).
    static func continuesHeavyweightExpansion(_ inFlight: ExpansionInFlight, _ plan: MigrationPlan) -> Bool {
        guard plan.steps.count == 1, let step = plan.steps.first, step.kind == .heavyweight else { return false }
        return inFlight.servesNewVersion(of: plan.store) && step.from == inFlight.oldVersion && step.to == inFlight.newVersion
    }
}

extension ExpansionInFlight {
    /// A heavyweight expansion's views serve the new version (`<store>@<new>`), the store's
    /// tables the old one; a lightweight one's the reverse (`<store>@<old>`).
    public func servesNewVersion(of store: String) -> Bool {
        viewsSchema == OldVersionViews.schemaName(store: store, version: newVersion)
    }
}
