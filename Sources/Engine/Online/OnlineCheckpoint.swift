import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// Where an `apply --online` of a lightweight step is: the next phase, and within a batched
/// phase the `_pk` its next batch starts at. Kept in `orchestrator.online_progress`, one row per
/// store, written in the same transaction as the work it records; deleted in the switch-over.
struct OnlineCheckpoint {
    var store: String
    var step: PlannedStep
    var digest: String
    /// The same plan's digest as releases before layout 3 wrote it (`OnlinePlan.legacyDigest`).
    var legacyDigest: String? = nil

    struct Position: Equatable {
        var phase: Int
        /// The next batch's lower bound, when `phase` is a batched phase under way.
        var nextKey: Int64?
    }

    static let table = "online_progress"

    static func prepare(on connection: PostgresConnection) throws {
        _ = try connection.execute("""
            CREATE TABLE IF NOT EXISTS \(ident: MetadataSchema.schema, table) (
                store text PRIMARY KEY,
                from_version text NOT NULL,
                to_version text NOT NULL,
                plan_digest text NOT NULL,
                phase integer NOT NULL,
                next_key bigint,
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """)
    }

    /// An interrupted online step of `store`, as (from, to), when one is recorded.
    static func unfinished(store: String, on connection: PostgresConnection) throws -> (from: String, to: String)? {
        let exists = try connection.execute("SELECT to_regclass(\(quoteIdentifier(MetadataSchema.schema) + "." + table)) IS NOT NULL")
        guard exists.rows.first?.first == "t" else { return nil }
        let row = try connection.execute("SELECT from_version, to_version FROM \(ident: MetadataSchema.schema, table) WHERE store = \(store)")
        guard let values = row.rows.first, let from = values[0], let to = values[1] else { return nil }
        return (from, to)
    }

    /// Where to start: the recorded position of this very plan (by its SHA-256 digest, or the
    /// FNV-1a one an earlier release recorded), else the beginning. A recorded run of another
    /// step or plan is refused: its phases are half in the store.
    func read(on connection: PostgresConnection) throws -> Position {
        let result = try connection.execute("""
            SELECT from_version, to_version, plan_digest, phase, next_key FROM \(ident: MetadataSchema.schema, Self.table) WHERE store = \(store)
            """)
        guard let row = result.rows.first else { return Position(phase: 0) }
        guard row[0] == step.from, row[1] == step.to, row[2] == digest || (legacyDigest != nil && row[2] == legacyDigest) else {
            throw OnlineStepUnfinished(store: store, from: row[0] ?? "?", to: row[1] ?? "?", phase: Int(row[3] ?? "") ?? 0)
        }
        return Position(phase: Int(row[3] ?? "") ?? 0, nextKey: row[4].flatMap { Int64($0) })
    }

    func save(_ position: Position, on connection: PostgresConnection) throws {
        _ = try connection.execute("""
            INSERT INTO \(ident: MetadataSchema.schema, Self.table) (store, from_version, to_version, plan_digest, phase, next_key)
            VALUES (\(store), \(step.from), \(step.to), \(digest), \(position.phase), \(position.nextKey.map(SQLValue.int) ?? .null))
            ON CONFLICT (store) DO UPDATE SET from_version = EXCLUDED.from_version, to_version = EXCLUDED.to_version,
                plan_digest = EXCLUDED.plan_digest, phase = EXCLUDED.phase, next_key = EXCLUDED.next_key, updated_at = now()
            """)
    }

    func clear(on connection: PostgresConnection) throws {
        _ = try connection.execute("DELETE FROM \(ident: MetadataSchema.schema, Self.table) WHERE store = \(store)")
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
