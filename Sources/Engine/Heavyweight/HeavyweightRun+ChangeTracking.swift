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
    func installTracking(_ tracking: ChangeTracking) throws {
        try options.executionPolicy.transaction(on: connection) {
            try StoreSchemas.requireOwnable(staging, role: .staging, store: migrator.store, on: connection)
            for statement in tracking.install { _ = try execute(statement) }
            try StoreSchemas.register(staging, role: .staging, store: migrator.store, version: step.to, on: connection)
        }
    }

    /// The checkpoint row of a pass, in its transaction: the last write logged (none can come
    /// while the guard is held) and the rows of every staging table — those the pass wrote
    /// counted again, the others as the previous checkpoint counted them.
    func recordCheckpoint(_ pass: PlannedPass, number: Int, rows: Int, after previous: Checkpoint?, _ tracking: ChangeTracking) throws -> Checkpoint {
        let seen = Int(try connection.execute(tracking.lastChange).int(0, "seen") ?? 0)
        let recount = previous == nil ? nil : pass.tablesWritten
        let tableRows = (previous?.tableRows ?? [:]).merging(try stagingRows(tracking, of: recount)) { $1 }
        let counts = JSONValue.object(tableRows.keys.sorted().map { ($0, .number(tableRows[$0]!)) }).rendered
        _ = try connection.execute("""
            INSERT INTO \(ident: staging, HeavyweightMigration.checkpointTable) (pass, name, fingerprint, rows, changes_seen, table_rows)
            VALUES (\(number), \(pass.name), \(fingerprint), \(rows), \(seen), \(counts)::jsonb)
            """)
        return Checkpoint(pass: number, rows: rows, changesSeen: seen, tableRows: tableRows)
    }

    func stagingRows(_ tracking: ChangeTracking, of tables: [String]? = nil) throws -> [String: Int] {
        if tables?.isEmpty == true { return [:] }
        let result = try connection.execute(tracking.countRows(of: tables))
        var rows: [String: Int] = [:]
        for row in result.rows.indices { rows[result.value(row, "name") ?? ""] = Int(result.int(row, "n") ?? 0) }
        return rows
    }

    /// Continuing after `checkpoint` is safe only when every table of the old store kept its
    /// triggers, none was written since, and the staging tables hold what was counted.
    func verify(since checkpoint: Checkpoint, _ tracking: ChangeTracking) throws {
        let store = migrator.store
        let untracked = try connection.execute(tracking.untracked(store: store)).rows.compactMap { $0[0] }
        if !untracked.isEmpty {
            throw StagingMismatch(staging: staging, reason: """
                holds passes whose view of \(store) can no longer be trusted: the change triggers on \
                \(untracked.map { "\(store).\($0)" }.joined(separator: ", ")) were removed, so writes since pass \(checkpoint.pass) cannot be seen
                """)
        }
        let changes = try connection.execute(tracking.changes(after: checkpoint.changesSeen))
        if !changes.isEmpty {
            var byTable: [(String, [String])] = []
            for row in changes.rows.indices {
                let table = "\(store).\(changes.value(row, "table_name") ?? "")"
                let operation = changes.value(row, "operation") ?? ""
                let what = changes.bool(row, "truncated") == true
                    ? "truncated"
                    : "\(changes.int(row, "rows") ?? 0) row(s) \(operation == "INSERT" ? "inserted" : operation == "UPDATE" ? "updated" : "deleted")"
                if let index = byTable.firstIndex(where: { $0.0 == table }) { byTable[index].1.append(what) } else { byTable.append((table, [what])) }
            }
            throw StagingMismatch(staging: staging, reason: """
                holds passes of \(store) as it was at pass \(checkpoint.pass), and it was written since: \
                \(byTable.map { "\($0.0) \($0.1.joined(separator: ", "))" }.joined(separator: "; "))
                """)
        }
        try verifyStagingRows(against: checkpoint, tracking)
    }

    /// Every staging table holds the rows `checkpoint` counted (none were changed by hand).
    func verifyStagingRows(against checkpoint: Checkpoint, _ tracking: ChangeTracking) throws {
        let now = try stagingRows(tracking)
        let differing = tracking.stagingTables.filter { now[$0] != checkpoint.tableRows[$0] }
        guard !differing.isEmpty else { return }
        let described = differing.map { table in
            "\(staging).\(table) holds \(now[table] ?? 0) row(s), \(checkpoint.tableRows[table].map(String.init) ?? "none") when pass \(checkpoint.pass) was checkpointed"
        }
        throw StagingMismatch(staging: staging, reason: "was changed outside orchestrator: \(described.joined(separator: "; "))")
    }
}
