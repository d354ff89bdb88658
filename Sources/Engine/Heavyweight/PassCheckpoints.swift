import Foundation
import JSONRendering
import Planning
import PostgresClient
import SQLBuilding

/// The passes of a heavyweight step committed in its staging schema, as `orchestrator.checkpoints`
/// records them (kind `heavyweight`, `CheckpointTable`): row 0 written with the staging schema
/// and its triggers, then one row per pass in the pass's transaction; every row names the step
/// by its digest. The swap deletes them, and so does making the staging schema again.
struct PassCheckpoints: StepCheckpoints {
    let named: CheckpointedStep

    private var table: SQL { "\(ident: MetadataSchema.schema, CheckpointTable.table)" }

    /// In the transaction making the staging schema: what an earlier run recorded goes, row 0
    /// comes.
    func installed(on connection: PostgresConnection) throws {
        try cleared(on: connection)
        _ = try connection.execute("""
            INSERT INTO \(table) (store, kind, pass, step_digest, from_version, to_version, name)
            VALUES (\(store), 'heavyweight', 0, \(digest), \(step.from), \(step.to), 'install')
            """)
    }

    /// In the swap's transaction, or before the staging schema is made again.
    func cleared(on connection: PostgresConnection) throws {
        _ = try connection.execute("DELETE FROM \(table) WHERE store = \(store) AND kind = 'heavyweight'")
    }

    /// A pass's row, in its transaction (on a session of its own under `ConcurrentPasses`).
    func record(_ checkpoint: Checkpoint, name: String, on connection: PostgresConnection) throws {
        let counts = JSONValue.object(checkpoint.tableRows.keys.sorted().map { ($0, .number(checkpoint.tableRows[$0]!)) }).rendered
        _ = try connection.execute("""
            INSERT INTO \(table) (store, kind, pass, step_digest, from_version, to_version, name, rows, changes_seen, table_rows)
            VALUES (\(store), 'heavyweight', \(checkpoint.pass), \(digest), \(step.from), \(step.to), \(name), \(checkpoint.rows), \(checkpoint.changesSeen), \(counts)::jsonb)
            """)
    }

    /// Online, after the catch-up rounds: the last pass's row holds the staging rows as they are.
    func recountLast(_ rows: [String: Int], on connection: PostgresConnection) throws {
        let counts = JSONValue.object(rows.keys.sorted().map { ($0, .number(rows[$0]!)) }).rendered
        _ = try connection.execute("""
            UPDATE \(table) SET table_rows = \(counts)::jsonb, updated_at = clock_timestamp()
            WHERE store = \(store) AND kind = 'heavyweight'
              AND pass = (SELECT max(pass) FROM \(table) WHERE store = \(store) AND kind = 'heavyweight')
            """)
    }

    /// What an earlier run of a heavyweight step of `store` left, for the snapshot
    /// (`StoreSurroundings.earlierRun`, which `ResumeDecision.decide` takes): no row 0, a
    /// staging schema that is not ours; nil before the metadata has the checkpoint table
    /// (layout 3, upgraded by the bootstrap before the plan under the lock).
    static func earlierRun(store: String, on connection: PostgresConnection) throws -> EarlierRun? {
        guard try CheckpointTable.exists(on: connection) else { return nil }
        let result = try connection.execute("""
            SELECT pass, step_digest, rows, changes_seen, table_rows::text AS table_rows FROM \(ident: MetadataSchema.schema, CheckpointTable.table)
            WHERE store = \(store) AND kind = 'heavyweight' ORDER BY pass
            """)
        guard !result.isEmpty, result.int(0, "pass") == 0 else { return EarlierRun(hasCheckpointTable: false, fingerprints: [], checkpoints: []) }
        let checkpoints = result.rows.indices.dropFirst().map { row in
            Checkpoint(
                pass: Int(result.int(row, "pass") ?? 0), rows: Int(result.int(row, "rows") ?? 0), changesSeen: Int(result.int(row, "changes_seen") ?? 0),
                tableRows: StoreCatalog.decodeJSON(result.value(row, "table_rows")) ?? [:]
            )
        }
        return EarlierRun(hasCheckpointTable: true, fingerprints: result.rows.indices.map { result.value($0, "step_digest") ?? "" }, checkpoints: checkpoints)
    }

    /// Continuing a run an earlier release recorded: its rows are recorded under `digest`.
    func adopt(on connection: PostgresConnection) throws {
        _ = try connection.execute("""
            UPDATE \(table) SET step_digest = \(digest), from_version = \(step.from), to_version = \(step.to)
            WHERE store = \(store) AND kind = 'heavyweight' AND step_digest <> \(digest)
            """)
    }

    /// The passes an interrupted heavyweight `apply` of `store` committed, each with the step
    /// digest it was recorded under (`StoreSurroundings.passesDone` decides which step they
    /// belong to); none without the staging schema. Before the metadata is upgraded to layout 4,
    /// from the staging schema's `_checkpoint`, as layout 3 kept them.
    static func committed(store: String, staging: String, on connection: PostgresConnection) throws -> [CommittedPass] {
        if try CheckpointTable.exists(on: connection) {
            let result = try connection.execute("""
                SELECT pass, step_digest FROM \(ident: MetadataSchema.schema, CheckpointTable.table)
                WHERE store = \(store) AND kind = 'heavyweight' ORDER BY pass
                """)
            return result.rows.indices.map { CommittedPass(pass: Int(result.int($0, "pass") ?? 0), stepDigest: result.value($0, "step_digest") ?? "") }
        }
        let legacy = quoteIdentifier(staging) + "." + quoteIdentifier(CheckpointTable.legacyTable)
        guard try connection.execute("SELECT to_regclass(\(legacy)) IS NOT NULL AS present").bool(0, "present") == true else { return [] }
        let result = try connection.execute("SELECT fingerprint FROM \(ident: staging, CheckpointTable.legacyTable)")
        return result.rows.indices.map { CommittedPass(pass: $0 + 1, stepDigest: result.value($0, "fingerprint") ?? "") }
    }
}
