import Planning

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

/// What a resumed heavyweight step checks, once it runs, before trusting what the earlier run
/// Planning decided to continue (`ResumeDecision.decide`) left. Pure, so tests need no database.
extension ResumeDecision {
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
