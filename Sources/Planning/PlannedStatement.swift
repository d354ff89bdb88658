import SQLBuilding

/// The strongest table lock a statement takes, as PostgreSQL names it.
public enum LockLevel: String, Sendable, Hashable, Codable {
    case none = "none"
    case accessShare = "ACCESS SHARE"
    case rowExclusive = "ROW EXCLUSIVE"
    case shareUpdateExclusive = "SHARE UPDATE EXCLUSIVE"
    case share = "SHARE"
    case shareRowExclusive = "SHARE ROW EXCLUSIVE"
    case accessExclusive = "ACCESS EXCLUSIVE"
}

/// One statement of a step: what it runs, the lock it takes, and why it is there.
///
/// Its text is the whole statement: `plan` prints it, the history records it and the
/// step digest (`PlannedStep.digest`) hashes it, so a value in it is a literal, never a bind.
public struct PlannedStatement: Sendable, Hashable {
    public private(set) var sql: SQL
    public var lock: LockLevel
    /// What the statement does, in words: "create table recipe (entity Recipe)".
    public var summary: String

    /// - Precondition: `sql` has no bound values (write them with the literal helpers).
    public init(_ sql: SQL, lock: LockLevel, summary: String) {
        precondition(sql.binds.isEmpty, "planned statement '\(summary)' has \(sql.binds.count) bound value(s): its text alone must be the statement")
        self.sql = sql
        self.lock = lock
        self.summary = summary
    }
}

/// A risk of a step, with a stable code scripts can match on.
public struct Hazard: Sendable, Hashable {
    public var code: String
    public var message: String
    /// Rows a mapping model leaves behind: the source entity they belong to, and how many.
    public var entity: String?
    public var estimatedRows: RowCount?

    public init(code: String, message: String, entity: String? = nil, estimatedRows: RowCount? = nil) {
        self.code = code
        self.message = message
        self.entity = entity
        self.estimatedRows = estimatedRows
    }
}

public struct PlannedStep: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case create
        case lightweight
        case heavyweight
    }

    public var kind: Kind
    /// The version the store is at before the step; nil for `create`.
    public var from: String?
    public var to: String
    public var statements: [PlannedStatement]
    public var hazards: [Hazard]
    /// Rows the step reads or writes, as far as the catalog's statistics know.
    public var rowEstimate: Int
    /// Heavyweight steps: the passes that build the new store in `stagingSchema`, each
    /// committed with a checkpoint; `statements` lists theirs, then the swap's. Empty for
    /// steps that run as one transaction.
    public var passes: [PlannedPass] = []
    /// Heavyweight steps: run in a second session that holds its lock until the swap has
    /// committed, so that rows written meanwhile cannot be lost between passes.
    public var writeGuard: PlannedStatement?
    /// Heavyweight steps: the final swap, in one short transaction with the metadata.
    public var swap: [PlannedStatement] = []
    public var stagingSchema: String?
    /// Heavyweight steps: the staging schema and the triggers logging writes to the old store,
    /// installed before the write guard is taken.
    public var changeTracking: ChangeTracking?
    /// Heavyweight steps run by `apply --online`: the row change log and the catch-up round;
    /// nil when the step cannot run online, and `onlineRefusal` says why.
    public var onlineCatchUp: OnlineCatchUp?
    public var onlineRefusal: OnlineRefusal?
    /// Heavyweight steps run by `apply --online`: stage 3 split around the write guard.
    public var onlineStageThree: OnlineStageThree?
    /// Passes an earlier, interrupted `apply` of this same step committed in `stagingSchema`:
    /// `apply` continues after them (filled in by the engine).
    public var passesDone = 0
    /// Where the old store is kept after the step; nil when it is not kept (`--no-backup`, or
    /// a later heavyweight step of a chain, whose old store is an intermediate version).
    public var backupSchema: String?
    /// Lightweight steps: how `apply --online` runs the step (docs/online-migrations.md).
    public var online: OnlinePlan?

    public init(kind: Kind, from: String?, to: String, statements: [PlannedStatement], hazards: [Hazard] = [], rowEstimate: Int = 0) {
        self.kind = kind
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
        for index in step.passes.indices {
            guard let table = step.passes[index].sourceTable else { continue }
            step.passes[index].rowEstimate = estimates.tables[table] ?? 0
        }
        return step
    }
}
