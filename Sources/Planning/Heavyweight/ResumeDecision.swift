/// The staging schema holds passes of a different plan, or no checkpoints: nothing was run.
public struct StagingMismatch: Error, CustomStringConvertible, Sendable, Hashable {
    public var staging: String
    public var reason: String
    public var description: String {
        "schema \(staging) \(reason); nothing was changed (run apply with --restart to discard it and start over)"
    }

    public init(staging: String, reason: String) {
        self.staging = staging
        self.reason = reason
    }
}

/// What a checkpoint recorded.
public struct Checkpoint: Sendable, Hashable {
    public var pass: Int
    public var rows: Int
    /// The last write to the old store logged when the pass committed.
    public var changesSeen: Int
    /// Rows of every staging table after the pass.
    public var tableRows: [String: Int]

    public init(pass: Int, rows: Int, changesSeen: Int, tableRows: [String: Int]) {
        self.pass = pass
        self.rows = rows
        self.changesSeen = changesSeen
        self.tableRows = tableRows
    }

    /// This checkpoint, then `next`'s of a pass that recounted the staging tables `recounted`
    /// (nil: every one): passes that ran at once (`ConcurrentPasses`) each copied the others'
    /// tables as they were before, so only what a pass recounted is taken from it.
    public func followed(by next: Checkpoint, recounted: [String]?) -> Checkpoint {
        var rows = recounted == nil ? next.tableRows : tableRows
        for table in recounted ?? [] { rows[table] = next.tableRows[table] }
        return Checkpoint(pass: max(pass, next.pass), rows: next.rows, changesSeen: max(changesSeen, next.changesSeen), tableRows: rows)
    }
}

/// What an earlier run of a heavyweight step left, as the engine read it from the database
/// into the snapshot (`StoreSurroundings.earlierRun`).
public struct EarlierRun: Sendable, Hashable {
    /// The checkpoint table is there (a staging schema without it is not ours).
    public var hasCheckpointTable: Bool
    /// The step digest of every checkpoint row, as recorded.
    public var fingerprints: [String]
    public var checkpoints: [Checkpoint]

    public init(hasCheckpointTable: Bool, fingerprints: [String], checkpoints: [Checkpoint]) {
        self.hasCheckpointTable = hasCheckpointTable
        self.fingerprints = fingerprints
        self.checkpoints = checkpoints
    }
}

/// The resume decisions of a heavyweight step, from what the snapshot shows: whether to start
/// afresh (install the staging schema and the change triggers) and which passes an earlier
/// run did. Pure, so tests need no database; the engine checks, once it runs the step, that
/// what the earlier run left can be trusted.
public struct ResumeDecision: Sendable, Hashable {
    /// Start afresh: create the staging schema and the change tracking (dropping what is there).
    public var startsAfresh: Bool
    /// Passes an earlier run committed, by 1-based number: skipped.
    public var done: [Int: Checkpoint]

    public init(startsAfresh: Bool, done: [Int: Checkpoint]) {
        self.startsAfresh = startsAfresh
        self.done = done
    }

    /// A step no earlier run left anything of.
    public static let fresh = ResumeDecision(startsAfresh: true, done: [:])

    /// The last checkpoint whole (every pass taken as recounting every table).
    public var last: Checkpoint? { last { _ in nil } }

    /// What the passes done leave, which the passes after them continue from: the checkpoints
    /// in pass order, each followed by the next for the tables its pass recounted
    /// (`recounted`, by pass number). After passes run one by one, the last checkpoint.
    public func last(recounted: (Int) -> [String]?) -> Checkpoint? {
        done.keys.sorted().reduce(nil) { folded, pass in
            folded.map { $0.followed(by: done[pass]!, recounted: recounted(pass)) } ?? done[pass]
        }
    }

    /// 1. Without a staging schema, or with `--restart`: start afresh.
    /// 2. A staging schema without the checkpoint table, or with another plan's checkpoints,
    ///    stops (nothing changed). A digest an earlier release recorded for this step
    ///    (`accepted`: `PlannedStep.earlierDigests`, and none: layout 3's empty `_checkpoint`)
    ///    is taken as `fingerprint`.
    /// 3. Otherwise skip the passes its checkpoints record.
    public static func decide(
        staging: String, fingerprint: String, accepted: Set<String> = [], stagingExists: Bool, restart: Bool, earlier: EarlierRun?
    ) throws(StagingMismatch) -> ResumeDecision {
        guard stagingExists && !restart else { return .fresh }
        guard let earlier, earlier.hasCheckpointTable else {
            throw StagingMismatch(staging: staging, reason: "exists but holds no checkpoints of an orchestrator migration")
        }
        guard earlier.fingerprints.allSatisfy({ $0 == fingerprint || accepted.contains($0) }) else {
            throw StagingMismatch(staging: staging, reason: "holds passes of another migration plan of this store (the model, mapping model or options changed since)")
        }
        return ResumeDecision(startsAfresh: false, done: Dictionary(earlier.checkpoints.map { ($0.pass, $0) }) { $1 })
    }
}

/// What a heavyweight step finds of an earlier run in its staging schema: decided, or a
/// staging schema it cannot continue (`apply` stops with the mismatch when it reaches the step).
public enum StagingResume: Sendable, Hashable {
    case decided(ResumeDecision)
    case mismatch(StagingMismatch)
}
