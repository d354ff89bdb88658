import SQLBuilding

public struct PlannedStep: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case create
        case lightweight
        case heavyweight
    }

    /// How the step runs (`StepBody`).
    public var body: StepBody
    public var kind: Kind { body.kind }
    /// The version the store is at before the step; nil for `create`.
    public var from: String?
    public var to: String
    /// The step's statements, as `plan` prints them: the offline form of a lightweight step
    /// (its phases are in `body`), a heavyweight step's passes' and then its swap's.
    public var statements: [PlannedStatement]
    public var hazards: [Hazard]
    /// Rows the step reads or writes, as far as the catalog's statistics know.
    public var rowEstimate: Int
    /// A lightweight step's: one for each of `statements`, from the change that planned it
    /// (`SubscriberSplit(step, published:)`); empty for any other step.
    public internal(set) var subscriberParts: [SubscriberPart] = []
    /// The digests fixed over every form planned, once the mode's was kept; nil for a step
    /// made by hand, whose digest hashes its body as it is.
    var identity: StepIdentity?

    public init(body: StepBody, from: String?, to: String, statements: [PlannedStatement], hazards: [Hazard] = [], rowEstimate: Int = 0) {
        self.body = body
        self.from = from
        self.to = to
        self.statements = statements
        self.hazards = hazards
        self.rowEstimate = rowEstimate
    }
}

extension PlannedStep {
    /// The step with the store's rows as estimates: every row for the step, a pass's source
    /// table for the pass.
    func estimated(by estimates: RowEstimates) -> PlannedStep {
        var step = self
        step.rowEstimate = estimates.total
        guard case .staged(var work) = step.body else { return step }
        for index in work.passes.indices {
            guard let table = work.passes[index].sourceTable else { continue }
            work.passes[index].rowEstimate = estimates.tables[table] ?? 0
        }
        step.body = .staged(work)
        return step
    }
}

/// How `apply` runs a step, planned whole for the mode asked (`Planner.plan(…, mode:)`): one
/// closed set, so the engine runs a step by switching over it and a new way of running is a
/// case every switch must take.
public enum StepBody: Sendable, Hashable {
    /// A new store: the step's statements in one transaction.
    case create
    /// A lightweight step run offline: the step's statements in one transaction, the store's
    /// tables locked for its whole length.
    case inPlace
    /// A lightweight step run by `apply --online` (or continuing a run an interrupted
    /// `apply --online` left): the phases of `OnlinePlan`, each short; the step's statements
    /// are its offline form, printed by `plan`. A plan with refusals cannot run.
    case phased(OnlinePlan)
    /// A heavyweight step: passes building the new store in a staging schema, then the swap.
    case staged(StagedWork)

    public var kind: PlannedStep.Kind {
        switch self {
        case .create: .create
        case .inPlace, .phased: .lightweight
        case .staged: .heavyweight
        }
    }
}

/// Mode a plan is made for: `apply` (offline), `apply --online`, or `apply --expand` (online,
/// destructive changes deferred to `complete`, the old version served through views).
public enum PlanMode: String, Sendable, Hashable {
    case offline
    case online
    case expand

    /// Whether steps run while the application writes: `online` and `expand`.
    public var runsOnline: Bool { self != .offline }
}

/// A heavyweight step's work: passes committed one by one with their checkpoints in
/// `stagingSchema`, under the write guard (offline) or with catch-up rounds before it (online),
/// then the swap.
public struct StagedWork: Sendable, Hashable {
    /// How the step runs under `apply --online`, or why it cannot.
    public enum CatchUpForm: Sendable, Hashable {
        /// The row change log and the catch-up round, and stage 3 split around the write guard.
        case planned(OnlineCatchUp, OnlineStageThree)
        case refused(OnlineRefusal)
    }

    /// The passes that build the new store in `stagingSchema`, each committed with a
    /// checkpoint; the step's `statements` lists theirs, then the swap's.
    public var passes: [PlannedPass]
    /// Run in a second session that holds its lock until the swap has committed, so that rows
    /// written meanwhile cannot be lost between passes.
    public var writeGuard: PlannedStatement
    /// The final swap, in one short transaction with the metadata.
    public var swap: [PlannedStatement]
    public var stagingSchema: String
    /// The staging schema and the triggers logging writes to the old store, installed before
    /// the write guard is taken.
    public var changeTracking: ChangeTracking
    /// Where the old store is kept after the step; nil when it is not kept (`--no-backup`, or a
    /// later heavyweight step of a chain, whose old store is an intermediate version).
    public var backupSchema: String?
    /// The online form. It is planned in both modes: a run `apply --online` left is finished by
    /// plain `apply` from the staging schema it made, and the step's digest hashes stage 3's.
    public var catchUpForm: CatchUpForm
    /// Planned for `apply --online`: catch-up rounds before the write guard is taken.
    public var runsOnline = false
    /// The phases `apply` runs, in order, for the step's mode (`HeavyweightPhase.planned`),
    /// laid out by `Planner.plan`; `plan --online` prints their `shown` lines.
    public var phases: [HeavyweightPhase] = []
    /// What the step continues of an earlier run in `stagingSchema` (`StoreSurroundings.resume`):
    /// the phases an earlier run did are marked done.
    public var resume = StagingResume.decided(.fresh)
    /// Passes an earlier, interrupted `apply` of this same step committed in `stagingSchema`:
    /// `apply` continues after them (decided from `StoreSurroundings`).
    public var passesDone = 0
    /// Each old table the new store has no table of the same name for, with the new tables
    /// its rows go to under other names (an entity mapping from a renamed entity): the swap
    /// puts them in the `FOR TABLE` publications that named the old one
    /// (`StorePublications`, `ReplicationHazards`).
    public var renamedTables: [String: [String]] = [:]
    /// `apply --expand`: the new version served read-only over the staging tables while the
    /// run waits for `complete` (`ExpandPlanning.expandedHeavyweight`); nil otherwise.
    public var newVersionViews: NewVersionViews?

    public init(
        passes: [PlannedPass], writeGuard: PlannedStatement, swap: [PlannedStatement], stagingSchema: String, changeTracking: ChangeTracking,
        backupSchema: String?, catchUpForm: CatchUpForm
    ) {
        self.passes = passes
        self.writeGuard = writeGuard
        self.swap = swap
        self.stagingSchema = stagingSchema
        self.changeTracking = changeTracking
        self.backupSchema = backupSchema
        self.catchUpForm = catchUpForm
    }

    /// Where the swap moves the old store: the backup schema when it is kept, else the retired
    /// schema it is dropped from.
    public func oldStorePlace(store: String) -> (schema: String, role: StoreSchemaRole) {
        backupSchema.map { ($0, .backup) } ?? (HeavyweightMigration.retiredSchema(for: store), .retired)
    }

    /// The catch-up plan; nil when the step cannot run online.
    public var catchUp: OnlineCatchUp? {
        if case .planned(let catchUp, _) = catchUpForm { return catchUp }
        return nil
    }

    /// Why the step cannot run online; nil when it can.
    public var refusal: OnlineRefusal? {
        if case .refused(let refusal) = catchUpForm { return refusal }
        return nil
    }

    /// Stage 3 split around the write guard; nil when the step cannot run online.
    public var stageThree: OnlineStageThree? {
        if case .planned(_, let stageThree) = catchUpForm { return stageThree }
        return nil
    }
}

extension PlannedStep {
    /// The heavyweight work; nil for any other step.
    public var staged: StagedWork? {
        if case .staged(let work) = body { return work }
        return nil
    }

    /// The online phases of a lightweight step planned for `apply --online`; nil otherwise.
    public var phases: OnlinePlan? {
        if case .phased(let plan) = body { return plan }
        return nil
    }

    /// The passes of a heavyweight step, none for any other.
    public var passes: [PlannedPass] { staged?.passes ?? [] }

    /// The step as it runs in `mode`, its digest fixed first over every form planned (a run
    /// or a saved plan of the other mode names the same work). Offline, a lightweight step
    /// runs in place unless it continues a run an interrupted `apply --online` left.
    func planned(for mode: PlanMode, continuesOnlineRun: Bool) -> PlannedStep {
        var step = self
        step.identity = StepIdentity(digest: digest, earlierDigests: earlierDigests)
        switch body {
        case .phased where mode == .offline && !continuesOnlineRun:
            step.body = .inPlace
        case .staged(var work):
            work.runsOnline = mode.runsOnline
            step.body = .staged(work)
        case .create, .inPlace, .phased:
            break
        }
        return step
    }
}

/// A step's identities fixed when its mode's form was kept (`PlannedStep.planned(for:)`).
struct StepIdentity: Sendable, Hashable {
    var digest: String
    var earlierDigests: [String]
}
