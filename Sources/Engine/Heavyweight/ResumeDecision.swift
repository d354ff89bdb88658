/// The staging schema holds passes of a different plan, or no checkpoints: nothing was run.
public struct StagingMismatch: Error, CustomStringConvertible, Equatable {
    public var staging: String
    public var reason: String
    public var description: String {
        "schema \(staging) \(reason); nothing was changed (run apply with --restart to discard it and start over)"
    }
}

/// What a checkpoint recorded.
struct Checkpoint: Equatable {
    var pass: Int
    var rows: Int
    /// The last write to the old store logged when the pass committed.
    var changesSeen: Int
    /// Rows of every staging table after the pass.
    var tableRows: [String: Int]

    /// This checkpoint, then `next`'s of a pass that recounted the staging tables `recounted`
    /// (nil: every one): passes that ran at once (`ConcurrentPasses`) each copied the others'
    /// tables as they were before, so only what a pass recounted is taken from it.
    func followed(by next: Checkpoint, recounted: [String]?) -> Checkpoint {
        var rows = recounted == nil ? next.tableRows : tableRows
        for table in recounted ?? [] { rows[table] = next.tableRows[table] }
        return Checkpoint(pass: max(pass, next.pass), rows: next.rows, changesSeen: max(changesSeen, next.changesSeen), tableRows: rows)
    }
}

/// What `apply` found of an earlier run of a heavyweight step, as read from the database.
struct EarlierRun: Equatable {
    /// The checkpoint table is there (a staging schema without it is not ours).
    var hasCheckpointTable: Bool
    /// The fingerprint of every checkpoint row.
    var fingerprints: [String]
    var checkpoints: [Checkpoint]
}

/// Writes to the old store the change log holds after a checkpoint, per table and operation.
struct LoggedWrites: Equatable {
    var table: String
    /// `INSERT`, `UPDATE`, `DELETE` or `TRUNCATE`.
    var operation: String
    var rows: Int
    var truncated: Bool
}

/// Statements another session ran on a staging table, as `StagingWriteLog` logs them.
struct StagingWrites: Equatable {
    var table: String
    /// `INSERT`, `UPDATE`, `DELETE` or `TRUNCATE`.
    var operation: String
    var statements: Int
}

/// The resume decisions of a heavyweight step, from what the database showed: whether to start
/// afresh (install the staging schema and the change triggers), which passes an earlier run
/// did, and whether what it left can be trusted. Pure, so tests need no database.
struct ResumeDecision: Equatable {
    /// Start afresh: create the staging schema and the change tracking (dropping what is there).
    var startsAfresh: Bool
    /// Passes an earlier run committed, by 1-based number: skipped.
    var done: [Int: Checkpoint]

    /// What the passes done leave, which the passes after them continue from: the checkpoints
    /// in pass order, each followed by the next for the tables its pass recounted
    /// (`recounted`, by pass number). After passes run one by one, the last checkpoint.
    /// The last checkpoint whole (every pass taken as recounting every table).
    var last: Checkpoint? { last { _ in nil } }

    func last(recounted: (Int) -> [String]?) -> Checkpoint? {
        done.keys.sorted().reduce(nil) { folded, pass in
            folded.map { $0.followed(by: done[pass]!, recounted: recounted(pass)) } ?? done[pass]
        }
    }

    /// 1. Without a staging schema, or with `--restart`: start afresh.
    /// 2. A staging schema without the checkpoint table, or with another plan's checkpoints,
    ///    stops (nothing changed).
    /// 3. Otherwise skip the passes its checkpoints record.
    static func decide(
        staging: String, fingerprint: String, stagingExists: Bool, restart: Bool, earlier: EarlierRun?
    ) throws(StagingMismatch) -> ResumeDecision {
        guard stagingExists && !restart else { return ResumeDecision(startsAfresh: true, done: [:]) }
        guard let earlier, earlier.hasCheckpointTable else {
            throw StagingMismatch(staging: staging, reason: "exists but holds no checkpoints of an orchestrator migration")
        }
        guard earlier.fingerprints.allSatisfy({ $0 == fingerprint }) else {
            throw StagingMismatch(staging: staging, reason: "holds passes of another migration plan of this store (the model, mapping model or options changed since)")
        }
        return ResumeDecision(startsAfresh: false, done: Dictionary(earlier.checkpoints.map { ($0.pass, $0) }) { $1 })
    }

    /// Continuing after `checkpoint` is safe only when every table of the old store kept its
    /// triggers, none was written since (unless `replaysWrites`: an online step maps them
    /// again), and the staging tables hold what was counted.
    static func verify(
        since checkpoint: Checkpoint, store: String, staging: String, untracked: [String], writes: [LoggedWrites],
        replaysWrites: Bool = false, stagingTables: [String], stagingRows: [String: Int]
    ) throws(StagingMismatch) {
        if !untracked.isEmpty {
            throw StagingMismatch(staging: staging, reason: """
                holds passes whose view of \(store) can no longer be trusted: the change triggers on \
                \(untracked.map { "\(store).\($0)" }.joined(separator: ", ")) were removed, so writes since pass \(checkpoint.pass) cannot be seen
                """)
        }
        if !writes.isEmpty && !replaysWrites {
            var byTable: [(String, [String])] = []
            for write in writes {
                let table = "\(store).\(write.table)"
                let what = write.truncated
                    ? "truncated"
                    : "\(write.rows) row(s) \(write.operation == "INSERT" ? "inserted" : write.operation == "UPDATE" ? "updated" : "deleted")"
                if let index = byTable.firstIndex(where: { $0.0 == table }) { byTable[index].1.append(what) } else { byTable.append((table, [what])) }
            }
            throw StagingMismatch(staging: staging, reason: """
                holds passes of \(store) as it was at pass \(checkpoint.pass), and it was written since: \
                \(byTable.map { "\($0.0) \($0.1.joined(separator: ", "))" }.joined(separator: "; "))
                """)
        }
        try verifyRows(against: checkpoint, staging: staging, stagingTables: stagingTables, stagingRows: stagingRows)
    }

    /// No other session wrote a staging table (`StagingWriteLog`): called once the rows were
    /// counted and found as `checkpoint` left them (an update, or rows deleted and as many
    /// inserted), so that a count that differs is what the error names first.
    static func verifyNoWrites(_ writes: [StagingWrites], since checkpoint: Checkpoint, staging: String) throws(StagingMismatch) {
        guard !writes.isEmpty else { return }
        var byTable: [(String, [String])] = []
        for write in writes {
            let what = "\(write.statements) \(write.operation)"
            if let index = byTable.firstIndex(where: { $0.0 == write.table }) { byTable[index].1.append(what) } else { byTable.append((write.table, [what])) }
        }
        let described = byTable.map { "\(staging).\($0.0) written by another session since it was made (\($0.1.joined(separator: ", ")))" }
        throw StagingMismatch(staging: staging, reason: "was changed outside orchestrator: \(described.joined(separator: "; ")); pass \(checkpoint.pass) is the last checkpointed")
    }

    /// Every staging table holds the rows `checkpoint` counted (none were changed by hand).
    static func verifyRows(against checkpoint: Checkpoint, staging: String, stagingTables: [String], stagingRows now: [String: Int]) throws(StagingMismatch) {
        let differing = stagingTables.filter { now[$0] != checkpoint.tableRows[$0] }
        guard !differing.isEmpty else { return }
        let described = differing.map { table in
            "\(staging).\(table) holds \(now[table] ?? 0) row(s), \(checkpoint.tableRows[table].map(String.init) ?? "none") when pass \(checkpoint.pass) was checkpointed"
        }
        throw StagingMismatch(staging: staging, reason: "was changed outside orchestrator: \(described.joined(separator: "; "))")
    }
}
