import Foundation
import JSONRendering
import ObjectModel
import PostgresClient
import SQLBuilding

/// Writes a store's metadata for what is not a planned step — `restore` and `adopt` — in the
/// caller's transaction: the version the store is now at, and the history row saying why.
enum StoreMetadataWriter {
    /// The store is at `version` of `modelName`; the version's definition is recorded too.
    static func setVersion(store: String, modelName: String, version: ModelVersion, on connection: PostgresConnection) throws {
        for statement in StepRecord.metadata(store: store, modelName: modelName, version: version) {
            try connection.execute(statement)
        }
    }

    /// A succeeded history row of `kind` from `from` to `to` (name and model hash each).
    static func recordEvent(
        store: String, kind: String, from: (name: String, hash: String)?, to: (name: String, hash: String), statements: [SQL],
        started: Date, on connection: PostgresConnection
    ) throws {
        let texts = JSONValue.array(statements.map { .string($0.text) }).rendered
        try connection.execute("""
            INSERT INTO \(ident: MetadataSchema.schema, "migrations")
                (store, kind, from_version, to_version, from_hash, to_hash, statements, rows, started_at, finished_at,
                 duration_ms, applied_by, outcome)
            VALUES (\(store), \(kind), \(from?.name), \(to.name), \(from?.hash), \(to.hash), \(texts)::jsonb, 0,
                    \(ISO8601DateFormatter.withFractionalSeconds.string(from: started))::timestamptz, clock_timestamp(),
                    \(milliseconds(since: started)), current_user || ' (' || \(StoreMigrator.operatingSystemUser) || ')', 'succeeded')
            """)
    }
}
