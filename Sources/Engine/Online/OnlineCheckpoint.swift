import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// Where an `apply --online` of a lightweight step is: the next phase, and within a batched
/// phase the `_pk` its next batch starts at. Kept in `orchestrator.checkpoints` (kind `online`,
/// `CheckpointTable`), one row per store, written in the same transaction as the work it
/// records; deleted in the switch-over.
struct OnlineCheckpoint: StepCheckpoints {
    let named: CheckpointedStep

    /// `orchestrator.online_progress`: the online rows, as a view with layout 3's columns.
    static let table = CheckpointTable.onlineView

    struct Position: Equatable {
        var phase: Int
        /// The next batch's lower bound, when `phase` is a batched phase under way.
        var nextKey: Int64?
    }

    /// An interrupted online step of `store`, as (from, to), when one is recorded: in
    /// `orchestrator.checkpoints` (not through the view, which a role owning the metadata tables
    /// may not own), or before the metadata is upgraded (`plan` writes nothing) in layout 3's
    /// table `online_progress`.
    static func unfinished(store: String, on connection: PostgresConnection) throws -> (from: String, to: String)? {
        let row: QueryResult
        if try CheckpointTable.exists(on: connection) {
            row = try connection.execute(unfinishedStatement(store: store))
        } else {
            let legacy = quoteIdentifier(MetadataSchema.schema) + "." + CheckpointTable.onlineView
            guard try connection.execute("SELECT to_regclass(\(legacy)) IS NOT NULL AS present").bool(0, "present") == true else { return nil }
            row = try connection.execute("SELECT from_version, to_version FROM \(ident: MetadataSchema.schema, CheckpointTable.onlineView) WHERE store = \(store)")
        }
        return unfinished(in: row)
    }

    /// The statement of `unfinished` once the metadata has the checkpoint table.
    static func unfinishedStatement(store: String) -> SQL {
        "SELECT from_version, to_version FROM \(ident: MetadataSchema.schema, CheckpointTable.table) WHERE store = \(store) AND kind = 'online'"
    }

    static func unfinished(in row: QueryResult) -> (from: String, to: String)? {
        guard let values = row.rows.first, let from = values[0], let to = values[1] else { return nil }
        return (from, to)
    }

    /// Where to start: the recorded position of this very step (by its digest, or one an
    /// earlier release recorded for it, `PlannedStep.earlierDigests`), else the beginning. A
    /// recorded run of another step or plan is refused: its phases are half in the store.
    func read(on connection: PostgresConnection) throws -> Position {
        let result = try connection.execute("""
            SELECT from_version, to_version, step_digest, pass, next_key FROM \(ident: MetadataSchema.schema, CheckpointTable.table)
            WHERE store = \(store) AND kind = 'online'
            """)
        guard let row = result.rows.first else { return Position(phase: 0) }
        let recorded = row[2] ?? ""
        guard row[0] == step.from, row[1] == step.to, recorded == digest || step.earlierDigests.contains(recorded) else {
            throw OnlineStepUnfinished(store: store, from: row[0] ?? "?", to: row[1] ?? "?", phase: Int(row[3] ?? "") ?? 0)
        }
        return Position(phase: Int(row[3] ?? "") ?? 0, nextKey: row[4].flatMap { Int64($0) })
    }

    func save(_ position: Position, on connection: PostgresConnection) throws {
        _ = try connection.execute("""
            INSERT INTO \(ident: MetadataSchema.schema, CheckpointTable.table) (store, kind, pass, step_digest, from_version, to_version, next_key)
            VALUES (\(store), 'online', \(position.phase), \(digest), \(step.from), \(step.to), \(position.nextKey.map(SQLValue.int) ?? .null))
            ON CONFLICT (store) WHERE kind = 'online' DO UPDATE SET pass = EXCLUDED.pass, step_digest = EXCLUDED.step_digest,
                from_version = EXCLUDED.from_version, to_version = EXCLUDED.to_version, next_key = EXCLUDED.next_key, updated_at = clock_timestamp()
            """)
    }

    func clear(on connection: PostgresConnection) throws {
        _ = try connection.execute("DELETE FROM \(ident: MetadataSchema.schema, CheckpointTable.table) WHERE store = \(store) AND kind = 'online'")
    }
}

/// An interrupted `apply --online` of another step (or of another plan of it) is half in the
/// store: it must be finished first.
public struct OnlineStepUnfinished: Error, CustomStringConvertible {
    public var store: String
    public var from: String
    public var to: String
    public var phase: Int

    public var description: String {
        "store \(store): an interrupted apply --online of '\(from)' -> '\(to)' stopped before phase \(phase + 1) and is half applied; finish it first with apply --online --to '\(to)' and the same models; nothing was changed"
    }
}
