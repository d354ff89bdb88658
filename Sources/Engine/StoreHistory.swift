import PostgresClient
import SQLBuilding

/// One row of a store's history (`orchestrator.migrations`): a migration step, a restore or an
/// adoption.
public struct MigrationRecord: Sendable, Hashable {
    public var id: Int
    /// `create`, `lightweight`, `heavyweight`, `restore` or `adopt`.
    public var kind: String
    public var fromVersion: String?
    public var toVersion: String
    public var fromHash: String?
    public var toHash: String
    /// UTC, ISO 8601 with milliseconds.
    public var startedAt: String
    public var finishedAt: String
    public var rows: Int
    public var durationMilliseconds: Int
    public var appliedBy: String
    /// `succeeded` or `failed`.
    public var outcome: String
    public var error: String?
    public var statementCount: Int
}

/// Reads a store's history from the metadata, oldest first.
public enum StoreHistory {
    public static func records(store: String, on connection: PostgresConnection) throws -> [MigrationRecord] {
        guard try MetadataSchema.exists(on: connection) else { return [] }
        let utc = "YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\""
        let result = try connection.execute("""
            SELECT id, kind, from_version, to_version, from_hash, to_hash,
                   to_char(started_at AT TIME ZONE 'UTC', \(utc)) AS started_at,
                   to_char(finished_at AT TIME ZONE 'UTC', \(utc)) AS finished_at,
                   rows, duration_ms, applied_by, outcome, error, jsonb_array_length(statements) AS statement_count
            FROM \(ident: MetadataSchema.schema, "migrations") WHERE store = \(store) ORDER BY id
            """)
        return result.rows.indices.map { row in
            MigrationRecord(
                id: Int(result.int(row, "id") ?? 0), kind: result.value(row, "kind") ?? "",
                fromVersion: result.value(row, "from_version"), toVersion: result.value(row, "to_version") ?? "",
                fromHash: result.value(row, "from_hash"), toHash: result.value(row, "to_hash") ?? "",
                startedAt: result.value(row, "started_at") ?? "", finishedAt: result.value(row, "finished_at") ?? "",
                rows: Int(result.int(row, "rows") ?? 0), durationMilliseconds: Int(result.int(row, "duration_ms") ?? 0),
                appliedBy: result.value(row, "applied_by") ?? "", outcome: result.value(row, "outcome") ?? "",
                error: result.value(row, "error"), statementCount: Int(result.int(row, "statement_count") ?? 0)
            )
        }
    }
}
