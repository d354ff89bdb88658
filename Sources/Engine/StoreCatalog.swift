import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// Reads what the database knows about a store: whether its schema exists and its metadata.
public enum StoreCatalog {
    public static func snapshot(store: String, on connection: PostgresConnection) throws -> StoreSnapshot {
        try snapshot(store: store, readingSurroundings: true, on: connection)
    }

    /// Without `readingSurroundings`, the row estimates and the replication topology are left
    /// out: `fleet apply`'s survey read them (`SurveyedCatalog.complete`).
    static func snapshot(store: String, readingSurroundings: Bool, on connection: PostgresConnection) throws -> StoreSnapshot {
        var snapshot = try storeSnapshot(store: store, estimatingRows: readingSurroundings, on: connection)
        snapshot.lockTable = try lockTable(on: connection)
        if readingSurroundings { snapshot.replication = try ReplicationCatalog.topology(store: store, on: connection) }
        return snapshot
    }

    /// The lock table's size, set only at server start: a session that keeps facts asks once.
    static func lockTable(on connection: PostgresConnection) throws -> LockTableSettings? {
        guard let facts = connection.sessionFacts else { return try readLockTable(on: connection) }
        let known = try facts.value("lock table") { try readLockTable(on: connection).map { "\($0.maxLocksPerTransaction) \($0.backends)" } }
        let parts = known?.split(separator: " ").compactMap { Int($0) } ?? []
        return parts.count == 2 ? LockTableSettings(maxLocksPerTransaction: parts[0], backends: parts[1]) : nil
    }

    private static func readLockTable(on connection: PostgresConnection) throws -> LockTableSettings? {
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

    /// Whether the schema exists, the store's metadata and the backup of an unfinished chain:
    /// one statement once the metadata is there.
    static func storeSnapshot(store: String, estimatingRows: Bool = true, on connection: PostgresConnection) throws -> StoreSnapshot {
        guard try MetadataSchema.exists(on: connection) else {
            let schemaExists = !(try connection.execute("SELECT 1 FROM pg_namespace WHERE nspname = \(store)")).isEmpty
            return StoreSnapshot(store: store, schemaExists: schemaExists, metadata: nil)
        }
        let backup: SQL = try MetadataSchema.hasStoreSchemas(on: connection) ? "(\(StoreSchemas.unfinishedChainBackup(of: store)))" : "NULL"
        let result = try connection.execute("""
            SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = \(store)) AS schema_exists, s.store IS NOT NULL AS recorded,
                   s.model_name, s.version_name, s.model_hash, s.entity_hashes::text AS entity_hashes,
                   s.version_identifiers::text AS version_identifiers, \(backup) AS backup
            FROM (SELECT 1) AS one LEFT JOIN \(ident: MetadataSchema.schema, "stores") AS s ON s.store = \(store)
            """)
        let schemaExists = result.bool(0, "schema_exists") == true
        guard result.bool(0, "recorded") == true, schemaExists else {
            return StoreSnapshot(store: store, schemaExists: schemaExists, metadata: nil)
        }
        let metadata = StoreMetadata(
            modelName: result.value(0, "model_name") ?? "",
            versionName: result.value(0, "version_name") ?? "",
            modelHash: result.value(0, "model_hash") ?? "",
            entityHashes: decodeJSON(result.value(0, "entity_hashes")) ?? [:],
            versionIdentifiers: decodeJSON(result.value(0, "version_identifiers")) ?? []
        )
        return StoreSnapshot(
            store: store, schemaExists: schemaExists, metadata: metadata,
            rowEstimates: estimatingRows ? try rowEstimates(store: store, on: connection) : RowEstimates(),
            unfinishedChainBackup: result.value(0, "backup")
        )
    }

    /// Versions of the model recorded in the database, newest first.
    public static func recordedVersions(model: String, on connection: PostgresConnection) throws -> [RecordedVersion] {
        guard try MetadataSchema.exists(on: connection) else { return [] }
        return recordedVersions(in: try connection.execute(recordedVersionsStatement(model: model)))
    }

    static func recordedVersionsStatement(model: String) -> SQL {
        """
        SELECT version_name, model_hash FROM \(ident: MetadataSchema.schema, "model_versions")
        WHERE model_name = \(model) ORDER BY recorded_at DESC
        """
    }

    static func recordedVersions(in result: QueryResult) -> [RecordedVersion] {
        result.rows.indices.map { row in
            RecordedVersion(name: result.value(row, "version_name") ?? "", modelHash: result.value(row, "model_hash") ?? "")
        }
    }

    /// Rows in the store's tables, from the catalog's statistics (the larger of the planner's
    /// estimate and the live tuple count), and each entity's share of its table from the
    /// statistics of `_entity` (its most common values, complete for the few entities a table
    /// holds once the table was analyzed).
    public static func rowEstimates(store: String, on connection: PostgresConnection) throws -> RowEstimates {
        try rowEstimates(of: [store], on: connection)[store] ?? RowEstimates()
    }

    /// The estimates of `stores` in two statements however many they are (`fleet apply`'s survey).
    static func rowEstimates(of stores: [String], on connection: PostgresConnection) throws -> [String: RowEstimates] {
        let names = CatalogReader.arrayLiteral(stores)
        let result = try connection.execute("""
            SELECT n.nspname AS store, c.relname AS name, greatest(c.reltuples, pg_stat_get_live_tuples(c.oid), 0)::bigint AS n
            FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname IN (SELECT unnest(\(names)::name[])) AND c.relkind = 'r'
              AND NOT (c.reltuples < 0 AND pg_stat_get_live_tuples(c.oid) = 0)
            """)
        // A table never analyzed whose live rows were not counted yet is left out: unknown.
        // pg_stat_get_live_tuples is pg_stat_user_tables.n_live_tup for one table; the view
        // would read the statistics of every table of the database (a fleet's has thousands).
        var estimates = Dictionary(uniqueKeysWithValues: stores.map { ($0, RowEstimates()) })
        for row in result.rows.indices {
            guard let store = result.value(row, "store") else { continue }
            estimates[store]?.tables[result.value(row, "name") ?? ""] = Int(result.int(row, "n") ?? 0)
        }
        let shares = try connection.execute("""
            SELECT s.schemaname AS store, s.tablename AS name, u.entity, u.share::float8 AS share
            FROM pg_stats s, unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS u(entity, share)
            WHERE s.schemaname = ANY(\(names)::name[]) AND s.attname = '_entity' AND NOT s.inherited
            """)
        // `= ANY` and not `IN (SELECT unnest(…))`: pg_stats checks privileges on every statistic
        // of the database before a semi-join can filter them; in a database of 3,000 stores
        // this read took 150 to 400 ms for one store (2.8 s an `apply` at 5,000 stores under
        // four processes), 15 to 45 ms with `= ANY` (docs/fleets-reference.md).
        for row in shares.rows.indices {
            guard let store = shares.value(row, "store"), let table = shares.value(row, "name"), let entity = shares.value(row, "entity"),
                  let share = shares.value(row, "share").flatMap(Double.init) else { continue }
            estimates[store]?.entityShares[table, default: [:]][entity] = share
        }
        return estimates
    }

    static func decodeJSON<T: Decodable>(_ text: String?) -> T? {
        guard let text else { return nil }
        return try? JSONDecoder().decode(T.self, from: Data(text.utf8))
    }
}
