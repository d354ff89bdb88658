import Foundation
import JSONRendering
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// What a resumed heavyweight step checks before trusting the passes an earlier run left:
/// writes to the old store logged by the change triggers, and the staging tables' rows.
extension HeavyweightRun {
    func schemaExists(_ schema: String) throws -> Bool {
        !(try connection.execute("SELECT 1 FROM pg_namespace WHERE nspname = \(schema)")).isEmpty
    }

    /// `ChangeTracking.install` in one transaction, once the schema in the staging schema's
    /// place (an earlier run's, dropped first) has proven to be this store's own.
    /// Online, the row change log and its triggers too (`OnlineCatchUp.install`).
    func installTracking(_ tracking: ChangeTracking, _ catchUp: OnlineCatchUp?) throws {
        try options.executionPolicy.transaction(on: connection) {
            try StoreSchemas.requireOwnable(staging, role: .staging, store: migrator.store, on: connection)
            for statement in tracking.install + (catchUp?.install ?? []) { _ = try execute(statement) }
            try checkpoints.installed(on: connection)
            try StoreSchemas.register(staging, role: .staging, store: migrator.store, version: step.to, on: connection)
        }
    }

    /// The checkpoint row of a pass, in its transaction: the last write logged (none can come
    /// while the guard is held) and the rows of every staging table — those the pass wrote
    /// counted again, the others as the previous checkpoint counted them.
    /// The change log's last entry.
    func changesSeen(_ tracking: ChangeTracking, on session: PostgresConnection? = nil) throws -> Int {
        Int(try (session ?? connection).execute(tracking.lastChange).int(0, "seen") ?? 0)
    }

    /// On `session` when given (`ConcurrentPasses`).
    func recordCheckpoint(
        _ pass: PlannedPass, number: Int, rows: Int, after previous: Checkpoint?, _ tracking: ChangeTracking, on session: PostgresConnection? = nil
    ) throws -> Checkpoint {
        let connection = session ?? connection
        let seen = try changesSeen(tracking, on: connection)
        let recount = previous == nil ? nil : pass.tablesWritten
        let tableRows = (previous?.tableRows ?? [:]).merging(try stagingRows(tracking, of: recount, on: connection)) { $1 }
        let checkpoint = Checkpoint(pass: number, rows: rows, changesSeen: seen, tableRows: tableRows)
        try checkpoints.record(checkpoint, name: pass.name, on: connection)
        return checkpoint
    }

    func stagingRows(_ tracking: ChangeTracking, of tables: [String]? = nil, on session: PostgresConnection? = nil) throws -> [String: Int] {
        if tables?.isEmpty == true { return [:] }
        let result = try (session ?? connection).execute(tracking.countRows(of: tables))
        var rows: [String: Int] = [:]
        for row in result.rows.indices { rows[result.value(row, "name") ?? ""] = Int(result.int(row, "n") ?? 0) }
        return rows
    }

    /// `ResumeDecision.verify` over what the change log and the staging tables hold now.
    func verify(since checkpoint: Checkpoint, _ tracking: ChangeTracking) throws {
        let untracked = try connection.execute(tracking.untracked(store: migrator.store)).rows.compactMap { $0[0] }
        let changes = try connection.execute(tracking.changes(after: checkpoint.changesSeen))
        let writes = changes.rows.indices.map { row in
            LoggedWrites(
                table: changes.value(row, "table_name") ?? "", operation: changes.value(row, "operation") ?? "",
                rows: Int(changes.int(row, "rows") ?? 0), truncated: changes.bool(row, "truncated") == true
            )
        }
        try ResumeDecision.verify(
            since: checkpoint, store: migrator.store, staging: staging, untracked: untracked, writes: writes, replaysWrites: isOnline,
            stagingTables: tracking.stagingTables, stagingRows: try stagingRows(tracking)
        )
    }

    /// Every staging table holds the rows `checkpoint` counted (none were changed by hand).
    func verifyStagingRows(against checkpoint: Checkpoint, _ tracking: ChangeTracking) throws {
        try ResumeDecision.verifyRows(against: checkpoint, staging: staging, stagingTables: tracking.stagingTables, stagingRows: try stagingRows(tracking))
    }
}
