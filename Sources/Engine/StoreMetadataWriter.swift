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
        let hashes = VersionHash.hashes(of: version)
        let entityHashes = JSONValue.object(hashes.entities.keys.sorted().map { ($0, .string(hashes.entities[$0]!)) }).rendered
        let identifiers = JSONValue.array(version.versionIdentifiers.map(JSONValue.string)).rendered
        let meta = MetadataSchema.schema
        try connection.execute("""
            INSERT INTO \(ident: meta, "stores") (store, model_name, version_name, model_hash, entity_hashes, version_identifiers)
            VALUES (\(store), \(modelName), \(version.name), \(hashes.model), \(entityHashes)::jsonb, \(identifiers)::jsonb)
            ON CONFLICT (store) DO UPDATE SET model_name = EXCLUDED.model_name, version_name = EXCLUDED.version_name,
                model_hash = EXCLUDED.model_hash, entity_hashes = EXCLUDED.entity_hashes,
                version_identifiers = EXCLUDED.version_identifiers, updated_at = now()
            """)
        try connection.execute("""
            INSERT INTO \(ident: meta, "model_versions") (model_name, version_name, model_hash, entity_hashes, format, definition)
            VALUES (\(modelName), \(version.name), \(hashes.model), \(entityHashes)::jsonb, 'native-json', \(NativeModelWriter.json(of: version)))
            ON CONFLICT (model_name, model_hash) DO NOTHING
            """)
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
