import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// Reads what the database knows about a store: whether its schema exists and its metadata.
public enum StoreCatalog {
    public static func snapshot(store: String, on connection: PostgresConnection) throws -> StoreSnapshot {
        var snapshot = try storeSnapshot(store: store, on: connection)
        snapshot.lockTable = try lockTable(on: connection)
        return snapshot
    }

    static func lockTable(on connection: PostgresConnection) throws -> LockTableSettings? {
        let result = try connection.execute("""
            SELECT current_setting('max_locks_per_transaction') AS per_transaction,
                   (current_setting('max_connections')::int + current_setting('autovacuum_max_workers')::int + 1
                    + current_setting('max_worker_processes')::int + current_setting('max_wal_senders')::int
                    + current_setting('max_prepared_transactions')::int)::text AS backends
            """)
        guard let perTransaction = result.value(0, "per_transaction").flatMap({ Int($0) }),
              let backends = result.value(0, "backends").flatMap({ Int($0) })
        else { return nil }
        return LockTableSettings(maxLocksPerTransaction: perTransaction, backends: backends)
    }

    static func storeSnapshot(store: String, on connection: PostgresConnection) throws -> StoreSnapshot {
        let schemaExists = !(try connection.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = \(store)"
        )).isEmpty
        guard try MetadataSchema.exists(on: connection) else {
            return StoreSnapshot(store: store, schemaExists: schemaExists, metadata: nil)
        }
        let result = try connection.execute("""
            SELECT model_name, version_name, model_hash, entity_hashes::text AS entity_hashes,
                   version_identifiers::text AS version_identifiers
            FROM \(ident: MetadataSchema.schema, "stores") WHERE store = \(store)
            """)
        guard !result.isEmpty, schemaExists else {
            return StoreSnapshot(store: store, schemaExists: schemaExists, metadata: nil)
        }
        let metadata = StoreMetadata(
            modelName: result.value(0, "model_name") ?? "",
            versionName: result.value(0, "version_name") ?? "",
            modelHash: result.value(0, "model_hash") ?? "",
            entityHashes: decodeJSON(result.value(0, "entity_hashes")) ?? [:],
            versionIdentifiers: decodeJSON(result.value(0, "version_identifiers")) ?? []
        )
        return StoreSnapshot(store: store, schemaExists: schemaExists, metadata: metadata)
    }

    /// Versions of the model recorded in the database, newest first.
    public static func recordedVersions(model: String, on connection: PostgresConnection) throws -> [RecordedVersion] {
        guard try MetadataSchema.exists(on: connection) else { return [] }
        let result = try connection.execute("""
            SELECT version_name, model_hash FROM \(ident: MetadataSchema.schema, "model_versions")
            WHERE model_name = \(model) ORDER BY recorded_at DESC
            """)
        return result.rows.indices.map { row in
            RecordedVersion(name: result.value(row, "version_name") ?? "", modelHash: result.value(row, "model_hash") ?? "")
        }
    }

    /// Rows in the store's tables, from the catalog's statistics (the larger of the planner's estimate and the live
    /// tuple count): what an in-place step may have to read.
    public static func estimatedRows(store: String, on connection: PostgresConnection) throws -> Int {
        try estimatedRowsByTable(store: store, on: connection).values.reduce(0, +)
    }

    /// The same estimate per table of the store.
    public static func estimatedRowsByTable(store: String, on connection: PostgresConnection) throws -> [String: Int] {
        let result = try connection.execute("""
            SELECT c.relname AS name, greatest(c.reltuples, coalesce(s.n_live_tup, 0), 0)::bigint AS n
            FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
            WHERE n.nspname = \(store) AND c.relkind = 'r'
            """)
        var rows: [String: Int] = [:]
        for row in result.rows.indices {
            rows[result.value(row, "name") ?? ""] = Int(result.int(row, "n") ?? 0)
        }
        return rows
    }

    static func decodeJSON<T: Decodable>(_ text: String?) -> T? {
        guard let text else { return nil }
        return try? JSONDecoder().decode(T.self, from: Data(text.utf8))
    }
}
