import ObjectModel
import SQLBuilding

/// How `apply --online` runs one lightweight step: phases in order, each short enough that the
/// application keeps reading and writing the store (docs/online-migrations.md). Pure: planned
/// from the step's changes with the offline statements, printed by `plan --online`.
public struct OnlinePlan: Sendable, Hashable {
    public var phases: [OnlinePhase]
    /// Why the step cannot run online (a change with no online form); empty when it can.
    public var refusals: [OnlineRefusal]
    /// Tables the switch-over replaces by a rebuilt copy (`ShadowTable`): the engine carries
    /// their privileges, owner and comments to it (`CarriedAccess`).
    public var rebuiltTables: [String] = []
    /// Planned for `apply --expand`: the old version served through views created in the
    /// switch-over, and what is deferred to `complete` (`ExpandPlanning`); nil otherwise.
    public var expansion: Expansion?
    /// `--postpone-switch-over` (`PlanningOptions.postponesSwitchOver`): the run waits for
    /// `orchestrator control proceed` before its last phase, the switch-over. Not a phase of its
    /// own (no statements, not in the digest); `plan --online` shows it in its place.
    public var waitsToSwitchOver = false

    public init(phases: [OnlinePhase], refusals: [OnlineRefusal]) {
        self.phases = phases
        self.refusals = refusals
    }

    public var isSupported: Bool { refusals.isEmpty }

    /// Triggers installed by the first `count` phases and not yet removed by them: those a
    /// resumed run reinstalls, and those the switch-over drops (all phases before it).
    public func liveTriggers(after count: Int) -> [OnlineTrigger] {
        let done = phases.prefix(count)
        let removed = Set(done.flatMap(\.removes))
        return done.flatMap(\.installs).filter { !removed.contains($0) }
    }
}

/// One phase: its statements, how they run, the strongest lock they take and how long.
public struct OnlinePhase: Sendable, Hashable {
    public enum Execution: String, Sendable, Hashable {
        /// The statements in one transaction under `lock_timeout`, retried on a lock failure.
        case transaction
        /// `batches` run again and again over ranges of `_pk`, each range its own transaction.
        case batches
        /// One statement outside any transaction (`CREATE INDEX CONCURRENTLY`).
        case outsideTransaction
    }

    /// How long the phase holds its strongest lock.
    public enum Hold: String, Sendable, Hashable {
        /// A catalog change: milliseconds, once the lock is granted.
        case instant
        /// One batch of rows: the rows it writes are locked, other rows stay writable.
        case batch
        /// A read of the whole table under a lock that lets writes go on.
        case scan
    }

    public var summary: String
    public var execution: Execution
    public var statements: [PlannedStatement]
    public var batches: BatchedStatement?
    /// `outsideTransaction`: the index it builds, dropped first when an interrupted run left it
    /// invalid.
    public var index: String?
    public var lock: LockLevel
    public var hold: Hold
    /// Triggers this phase installs; the switch-over drops those no phase removed before.
    public var installs: [OnlineTrigger] = []
    /// Triggers this phase drops (a column swapped in before the end).
    public var removes: [OnlineTrigger] = []

    public init(summary: String, execution: Execution = .transaction, statements: [PlannedStatement], lock: LockLevel, hold: Hold) {
        self.summary = summary
        self.execution = execution
        self.statements = statements
        self.lock = lock
        self.hold = hold
    }

    static func batched(_ batches: BatchedStatement, summary: String) -> OnlinePhase {
        let summary = batches.statistics.map { summary + ", then its statistics (\($0.text))" } ?? summary
        var phase = OnlinePhase(summary: summary, execution: .batches, statements: [], lock: .rowExclusive, hold: .batch)
        phase.batches = batches
        return phase
    }

    static func concurrently(_ statement: PlannedStatement, index: String, lock: LockLevel = .shareUpdateExclusive) -> OnlinePhase {
        var phase = OnlinePhase(summary: statement.summary, execution: .outsideTransaction, statements: [statement], lock: lock, hold: .scan)
        phase.index = index
        return phase
    }

    /// One catalog change in its own short transaction.
    static func instant(_ statements: [PlannedStatement], summary: String? = nil) -> OnlinePhase {
        OnlinePhase(
            summary: summary ?? statements.map(\.summary).joined(separator: "; "), statements: statements,
            lock: statements.map(\.lock).max() ?? .none, hold: .instant
        )
    }
}

/// A statement run once per range of `_pk` of `table`: `prefix` `AND <range>` `suffix`.
public struct BatchedStatement: Sendable, Hashable {
    public var schema: String
    /// The table whose `_pk`s are walked.
    public var table: String
    /// Ends in a `WHERE` condition that the range is ANDed to.
    public var prefix: SQL
    /// The `_pk` column as the statement names it (`"_pk"`, `r."_pk"`).
    public var key: SQL
    public var suffix: SQL
    /// Run first in each batch's transaction (`SET LOCAL` of a setting the offline step has).
    public var setup: [SQL] = []
    /// The range again, on this key, after `suffix`: for a statement whose outer query reads
    /// the rows of the range too (by its index, rather than the whole table).
    public var keyAgain: SQL?
    /// Run after the last batch, in the transaction that records the phase done: `ANALYZE` of
    /// the table (or column) the batches filled, new to the store, so that the planner knows
    /// its rows before the application and the old version's views read them (autovacuum's
    /// analyze may come a minute later; until then a lookup can take a whole index scan). Not
    /// part of the step's digest: a run an earlier release left resumes as it was.
    public var statistics: SQL?

    public init(schema: String, table: String, prefix: SQL, key: SQL = "\(ident: "_pk")", suffix: SQL = "") {
        self.schema = schema
        self.table = table
        self.prefix = prefix
        self.key = key
        self.suffix = suffix
    }

    /// The statement for keys in `lower..<upper`.
    public func sql(from lower: Int64, below upper: Int64) -> SQL {
        var sql: SQL = "\(prefix) AND \(key) >= \(literal: lower) AND \(key) < \(literal: upper)\(suffix)"
        if let keyAgain { sql.append(" AND \(keyAgain) >= \(literal: lower) AND \(keyAgain) < \(literal: upper)") }
        return sql
    }

    /// The same, with `ANALYZE` of `table` (or of its `column`) after the last batch.
    func analyzing(_ table: String, column: String? = nil) -> BatchedStatement {
        var analyzed = self
        analyzed.statistics = column.map { "ANALYZE \(ident: schema, table) (\(ident: $0))" } ?? "ANALYZE \(ident: schema, table)"
        return analyzed
    }

    /// As `plan` prints it.
    public var template: SQL {
        var sql: SQL = "\(prefix) AND \(key) >= :from AND \(key) < :to\(suffix)"
        if let keyAgain { sql.append(" AND \(keyAgain) >= :from AND \(keyAgain) < :to") }
        return SQL.joined(setup + [sql], separator: "; ")
    }
}

/// A trigger the online form of a change keeps on a live table while it backfills, with its
/// function; removed in the switch-over, and by any later `apply` after a crash.
public struct OnlineTrigger: Sendable, Hashable {
    public var table: String
    /// Also the function's name.
    public var name: String
    /// A log table the trigger's function reads, dropped with it (`ClearedLinks`).
    public var log: String?

    /// Every trigger and function `apply --online` makes starts so (or with `firstPrefix`), and
    /// nothing else's does.
    public static let prefix = "orchestrator_online_"
    /// The same in capitals, for a trigger that must act before the table's foreign key actions:
    /// PostgreSQL fires a table's triggers of one event in the order of their names (C
    /// collation), its keys' internal `RI_ConstraintTrigger_a_<oid>` among them, and `O` sorts
    /// before `R` (`ReplacedKeyRule`).
    public static let firstPrefix = prefix.uppercased()
}

extension LockLevel: Comparable {
    static let order: [LockLevel] = [.none, .accessShare, .rowExclusive, .shareUpdateExclusive, .share, .shareRowExclusive, .accessExclusive]

    public static func < (lhs: LockLevel, rhs: LockLevel) -> Bool {
        order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
    }
}

extension OnlinePlan {
    /// The phases' SQL as one text, which every identity of the plan hashes: the step digest
    /// (`PlannedStep.digest`) and those earlier releases recorded (`PlannedStep.earlierDigests`).
    var digestedText: String {
        var text = ""
        for phase in phases {
            text += phase.execution.rawValue + "\n" + phase.statements.map(\.sql.text).joined(separator: "\n")
            if let batches = phase.batches { text += batches.template.text }
            text += "\n;\n"
        }
        return text
    }
}

extension OnlinePhase {
    /// The two phases of a change kept right by a trigger while it backfills: the trigger
    /// installed (its function and the row trigger, in one short transaction), then batches
    /// bringing the rows already there to what the trigger makes of the rows written meanwhile.
    /// `does` says what the trigger does to the rows written, for the summaries; a trigger
    /// mirroring rows elsewhere says what a `TRUNCATE` of its table clears (`OnlineTruncates`).
    static func triggeredBatches(
        _ trigger: OnlineTrigger, in schema: String, timing: String, body: SQL, does: String, batches: BatchedStatement, summary: String,
        truncate: TruncateFollowing? = nil
    ) -> [OnlinePhase] {
        var install = OnlinePhase.instant(
            trigger.installStatements(in: schema, timing: timing, body: body, summary: does),
            summary: "trigger on \(trigger.table): \(does)"
        )
        install.installs = [trigger]
        if let truncate { install.following(truncate: truncate, of: trigger, in: schema) }
        return [install, .batched(batches, summary: summary)]
    }
}
