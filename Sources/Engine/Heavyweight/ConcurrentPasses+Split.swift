import Planning
import PostgresClient

/// A stage 1 pass run in parts at once (`SplitInsert`): only under the write guard (offline),
/// where the old store's rows cannot change between the parts' snapshots, and on a staging
/// schema whose writes by other sessions are logged (`StagingWriteLog`), so that a resume
/// trusts the checkpoints' counts and never counts a table an interrupted run's parts left
/// rows in.
extension ConcurrentPasses {
    /// How many parts `pass` runs in: `jobs` when it has a split form and reads at least
    /// `ApplyOptions.splitRowsFrom` rows; 1 otherwise.
    static func parts(of pass: PlannedPass, in run: HeavyweightRun, jobs: Int, guarded: Bool, stagingLogged: Bool) -> Int {
        guard pass.split != nil, guarded, stagingLogged, jobs > 1, pass.rowEstimate >= run.options.splitRowsFrom else { return 1 }
        return jobs
    }

    /// Empties the tables of the split passes about to run (what an interrupted run's parts left).
    static func clearSplitTables(of passes: [PlannedPass], in run: HeavyweightRun, on session: PostgresConnection) throws {
        let clears = passes.compactMap(\.split?.clear)
        guard !clears.isEmpty else { return }
        try run.options.executionPolicy.transaction(on: session) {
            for statement in clears { _ = try run.execute(statement, on: session) }
        }
    }

    /// The size in blocks of the table `pass` reads, which its parts share out.
    static func blocks(read pass: PlannedPass, on session: PostgresConnection) throws -> Int64 {
        try session.execute(pass.split!.blocks).int(0, "blocks") ?? 0
    }

    /// Part `index` of `count` of `pass`'s INSERT over a table of `blocks` blocks, committed on
    /// its own; the rows it added.
    static func runPart(_ pass: PlannedPass, _ index: Int, of count: Int, blocks: Int64, in run: HeavyweightRun, on session: PostgresConnection) throws -> Int {
        let split = pass.split!
        return try run.options.executionPolicy.transaction(on: session) {
            try run.execute(split.part(index, of: count, blocks: blocks, insert: pass.statements[0]), on: session)
        }
    }
}
