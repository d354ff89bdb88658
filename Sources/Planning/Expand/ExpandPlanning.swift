import ObjectModel
import SQLBuilding

/// `plan --expand` / `apply --expand`: the one lightweight step of the plan, run online with
/// its destructive changes deferred to `complete`, and the old version served through views
/// (`OldVersionViews`) created in the switch-over (docs/rolling-deploys.md).
///
/// 1. Only one step can be expanded: several steps, or an expansion still in flight, is a
///    blocker with a stable code. A heavyweight step is the online one, its new version served
///    read-only until `complete` (`expandedHeavyweight`); points 2 to 4 are a lightweight one's.
/// 2. Deferred: every removed column and every dropped table whose contents are lost
///    (`ExpandDeferral`); the constraints on those columns that new writers would violate go
///    first, as the step's first phase.
/// 3. The views, or every change they cannot serve (each an `ExpandRefusal`, as a blocker);
///    a removed column or table kept until `complete` is read and written by the old version
///    as it was (a removed entity's rows stay in its own table, nothing copied).
/// 4. The kept changes are planned online; the views are created at the end of the
///    switch-over, in its transaction, so that the old release never meets the new tables bare.
///    The renames run there too when only catalog changes follow them; when a backfill follows
///    a rename, plain views of the old version's tables are created before the first rename
///    instead (`viewsBeforeRenames`), and replaced by the translating ones in the switch-over.
enum ExpandPlanning {
    static func expanded(_ plan: MigrationPlan, model: VersionedModel, surroundings: StoreSurroundings, explicitMappings: [ExplicitMapping] = []) -> MigrationPlan {
        var plan = plan
        if let inFlight = surroundings.expansionInFlight {
            guard continuesHeavyweightExpansion(inFlight, plan) else { return plan }
            plan.blockerDetails.removeAll { $0.code == .expandInFlight }
        }
        guard plan.status == .migrationRequired, plan.isExecutable else { return plan }
        guard plan.steps.count == 1, let step = plan.steps.first else {
            plan.blockerDetails.append(Blocker(
                .expandSeveralSteps,
                "apply --expand serves one version beside the next: the plan has \(plan.steps.count) steps ('\(plan.storeVersion ?? "")' -> '\(plan.targetVersion)'); expand one version at a time with --to"
            ))
            return plan
        }
        if case .staged(let work) = step.body { return expandedHeavyweight(plan, work: work, model: model, explicitMappings: explicitMappings) }
        guard step.kind == .lightweight, let from = step.from.flatMap(model.version(named:)), let to = model.version(named: step.to),
              let mapping = MappingInference.infer(from: from, to: to).mapping else {
            plan.blockerDetails.append(Blocker(
                .expandHeavyweight,
                "'\(step.from ?? "")' -> '\(step.to)' is a heavyweight step (a mapping model): apply --expand serves only lightweight steps; run apply --online"
            ))
            return plan
        }
        let pairing = LayoutPairing(mapping: mapping, source: from, destination: to, schema: plan.store)
        let deferral = ExpandDeferral(pairing: pairing, store: plan.store)
        let views: OldVersionViews
        do {
            views = try OldVersionViews(mapping: mapping, from: from, to: to, store: plan.store, keptColumns: deferral.keptColumns, keptTables: deferral.keptTables)
        } catch {
            plan.blockerDetails += error.refusals.map { Blocker(Blocker.Code(rawValue: $0.code.rawValue)!, $0.message) }
            return plan
        }
        var online = OnlinePlanner.plan(deferral.kept, schema: plan.store)
        let relaxing = deferral.relaxing.flatMap { $0.statements(in: plan.store) }
        if !relaxing.isEmpty { online.phases.insert(.instant(relaxing), at: 0) }
        let creation = views.statements.map { PlannedStatement($0, lock: .accessShare, summary: "serve '\(from.name)' in \(views.schema)") }
        var switchOver = online.phases.removeLast()
        let drops = dropsAtSwitchOver(&online)
        let moved = renamesAtSwitchOver(&online)
        let early = viewsBeforeRenames(&online, layout: pairing.sourceLayout, views: views)
        let replaced: [PlannedStatement] = early
            ? [PlannedStatement("DROP SCHEMA \(ident: views.schema) CASCADE", lock: .accessExclusive, summary: "drop the plain views of '\(from.name)' made before the renames")]
            : []
        switchOver.statements = replaced + moved + drops + switchOver.statements + creation
        switchOver.lock = switchOver.statements.map(\.lock).max() ?? switchOver.lock
        switchOver.summary = ((moved + drops).isEmpty ? "" : (moved + drops).map(\.summary).joined(separator: "; ") + "; ")
            + switchOver.summary + "; create the views of '\(from.name)' in \(views.schema)"
        online.phases.append(switchOver)
        online.expansion = Expansion(
            oldVersion: from.name, newVersion: to.name, viewsSchema: views.schema,
            deferred: deferral.deferred.flatMap { $0.statements(in: plan.store) }
        )
        plan.steps[0].body = .phased(online)
        return plan
    }
}

extension ExpandPlanning {
    /// The phases from the first that renames a table or column up to the switch-over, taken
    /// out to run in the switch-over's transaction, when all are catalog changes without
    /// triggers: the old release then never meets a renamed name before its views exist. When
    /// a backfill runs after a rename, nothing is moved, and the old release's statements naming
    /// what was renamed fail until the switch-over (docs/rolling-deploys.md, "Limits").
    static func renamesAtSwitchOver(_ online: inout OnlinePlan) -> [PlannedStatement] {
        let beforeSwitchOver = online.phases.indices
        guard let first = online.phases.firstIndex(where: { phase in phase.statements.contains { $0.sql.text.contains(" RENAME ") } }) else { return [] }
        let moved = online.phases[first..<beforeSwitchOver.upperBound]
        guard moved.allSatisfy({ $0.execution == .transaction && $0.hold == .instant && $0.installs.isEmpty && $0.removes.isEmpty }) else { return [] }
        online.phases.removeSubrange(first...)
        return moved.flatMap(\.statements)
    }
}

/// What `apply --expand` leaves for `complete`: the old version's views schema, and the
/// destructive statements deferred, in the order they run (after the views are dropped).
public struct Expansion: Sendable, Hashable {
    public var oldVersion: String
    public var newVersion: String
    public var viewsSchema: String
    public var deferred: [PlannedStatement]

    public init(oldVersion: String, newVersion: String, viewsSchema: String, deferred: [PlannedStatement]) {
        self.oldVersion = oldVersion
        self.newVersion = newVersion
        self.viewsSchema = viewsSchema
        self.deferred = deferred
    }
}

/// An expansion recorded for a store (`orchestrator.expansions`), read by the engine: while it
/// is there the store serves two versions, and every other `apply` waits for `complete`.
public struct ExpansionInFlight: Sendable, Hashable {
    public var oldVersion: String
    public var newVersion: String
    public var viewsSchema: String
    /// A heavyweight expansion's views written through a reverse mapping model (each has the
    /// `write` trigger), read from the catalog; empty when the new version is read-only.
    public var writtenTables: [String]

    public init(oldVersion: String, newVersion: String, viewsSchema: String, writtenTables: [String] = []) {
        self.oldVersion = oldVersion
        self.newVersion = newVersion
        self.viewsSchema = viewsSchema
        self.writtenTables = writtenTables
    }
}

extension StoreSurroundings {
    /// An expansion in flight blocks any migration of the store, whatever the mode: the views
    /// read the tables as they are.
    func expansionBlockers(of plan: MigrationPlan) -> [Blocker] {
        guard let expansion = expansionInFlight, plan.status == .migrationRequired else { return [] }
        if expansion.servesNewVersion(of: plan.store) {
            return [Blocker(
                .expandInFlight,
                "store \(plan.store) serves '\(expansion.newVersion)' read-only through \(expansion.viewsSchema) beside '\(expansion.oldVersion)' (apply --expand of a heavyweight step, waiting for complete): run orchestrator complete --store \(plan.store) (or rollback) first; an apply --expand of the same step continues it"
            )]
        }
        return [Blocker(
            .expandInFlight,
            "store \(plan.store) serves '\(expansion.oldVersion)' beside '\(expansion.newVersion)' through \(expansion.viewsSchema) (apply --expand): run orchestrator complete --store \(plan.store) first"
        )]
    }
}
