import Planning
import PostgresClient
import SQLBuilding

/// The schemas orchestrator makes beside a store — `<store>~staging` while a heavyweight step
/// builds the new store, `<store>~` (the backup) and `<store>~retired` after its swap — recorded
/// in `orchestrator.store_schemas`. A schema is dropped or renamed in one of these places only
/// when it is recorded there for that store and role: never another store, never a schema
/// orchestrator did not create.
public enum StoreSchemas {
    static let table = "store_schemas"

    public typealias Role = StoreSchemaRole

    public static var reservedSuffixes: [String] { StoreSurroundings.reservedSuffixes }

    /// Why `schema` cannot be dropped or replaced as the `role` schema of `store`; nil when it
    /// does not exist or is recorded as exactly that (`StoreSurroundings.conflict`).
    static func conflict(_ schema: String, role: Role, store: String, on connection: PostgresConnection) throws -> String? {
        let neighbour = try neighbours([schema], on: connection)[schema] ?? NeighbourSchema(present: false, isStore: false, record: nil)
        return StoreSurroundings.conflict(schema, role: role, store: store, neighbour: neighbour)
    }

    /// Each of `schemas`: whether it exists, is a store, and how `store_schemas` records it (when
    /// the metadata has that table).
    static func neighbours(_ schemas: [String], on connection: PostgresConnection) throws -> [String: NeighbourSchema] {
        let meta = MetadataSchema.schema
        let recorded = try MetadataSchema.hasStoreSchemas(on: connection)
        let isStore: SQL = try MetadataSchema.exists(on: connection) ? "EXISTS (SELECT 1 FROM \(ident: meta, "stores") WHERE store = v.name)" : "false"
        let record: SQL = recorded
            ? "(SELECT r.store FROM \(ident: meta, table) r WHERE r.schema = v.name), (SELECT r.role FROM \(ident: meta, table) r WHERE r.schema = v.name)"
            : "NULL::text, NULL::text"
        let result = try connection.execute("""
            SELECT v.name, EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = v.name) AS present, \(isStore) AS is_store, \(record)
            FROM unnest(ARRAY[\(literals: schemas)]::text[]) AS v(name)
            """)
        var found: [String: NeighbourSchema] = [:]
        for row in result.rows.indices {
            guard let name = result.rows[row][0] else { continue }
            let store = result.rows[row][3]
            found[name] = NeighbourSchema(
                present: result.bool(row, "present") == true, isStore: result.bool(row, "is_store") == true,
                record: store.map { NeighbourSchema.Record(store: $0, role: Role(rawValue: result.rows[row][4] ?? "")) }
            )
        }
        return found
    }

    /// Why `store` cannot be created under that name; nil when it can.
    static func nameConflict(store: String, on connection: PostgresConnection) throws -> String? {
        try nameFacts(store: store, on: connection).nameConflict(store: store)
    }

    /// What decides whether a missing store may take its name (`StoreSurroundings.nameConflict`).
    static func nameFacts(store: String, on connection: PostgresConnection) throws -> StoreSurroundings {
        var facts = StoreSurroundings()
        guard !reservedSuffixes.contains(where: store.hasSuffix) else { return facts }
        // The other way round: a store (named before this rule) in the place of one of its schemas.
        let derived = [HeavyweightMigration.backupSchema(for: store), HeavyweightMigration.stagingSchema(for: store), HeavyweightMigration.retiredSchema(for: store)]
        if try MetadataSchema.exists(on: connection) {
            let taken = try connection.execute("SELECT store FROM \(ident: MetadataSchema.schema, "stores") WHERE store IN (\(SQL.joined(derived.map { "\($0)" }, separator: ", "))) ORDER BY store")
            facts.storesInDerivedPlaces = taken.rows.compactMap { $0[0] }
        }
        guard try MetadataSchema.hasStoreSchemas(on: connection) else { return facts }
        let owner = try connection.execute("SELECT store, role FROM \(ident: MetadataSchema.schema, table) WHERE schema = \(store)")
        if !owner.isEmpty, let other = owner.value(0, "store") {
            facts.nameRecordedAs = NeighbourSchema.Record(store: other, role: Role(rawValue: owner.value(0, "role") ?? ""))
        }
        return facts
    }

    /// Checks `conflict` and throws it.
    static func requireOwnable(_ schema: String, role: Role, store: String, on connection: PostgresConnection) throws {
        if let reason = try conflict(schema, role: role, store: store, on: connection) { throw ForeignSchema(reason: reason) }
    }

    /// Records `schema` as the `role` schema of `store`, holding (or being built to) `version`.
    static func register(_ schema: String, role: Role, store: String, version: String?, chainFinished: Bool = true, on connection: PostgresConnection) throws {
        _ = try connection.execute(registration(schema, role: role, store: store, version: version, chainFinished: chainFinished))
    }

    /// The statement of `register`.
    static func registration(_ schema: String, role: Role, store: String, version: String?, chainFinished: Bool = true) -> SQL {
        """
        INSERT INTO \(ident: MetadataSchema.schema, table) (schema, store, role, version_name, chain_finished)
        VALUES (\(schema), \(store), \(role.rawValue), \(version), \(chainFinished))
        ON CONFLICT (schema) DO UPDATE SET store = EXCLUDED.store, role = EXCLUDED.role, version_name = EXCLUDED.version_name,
            chain_finished = EXCLUDED.chain_finished, created_at = now()
        """
    }

    static func unregister(_ schema: String, on connection: PostgresConnection) throws {
        _ = try connection.execute(unregistration(schema))
    }

    /// The statement of `unregister`.
    static func unregistration(_ schema: String) -> SQL {
        "DELETE FROM \(ident: MetadataSchema.schema, table) WHERE schema = \(schema)"
    }

    /// The backup an `apply` made in the first heavyweight step of a chain it did not finish:
    /// the store as it was before that run, which the next run keeps.
    static func backupOfUnfinishedChain(store: String, on connection: PostgresConnection) throws -> String? {
        guard try MetadataSchema.hasStoreSchemas(on: connection) else { return nil }
        return try connection.execute(unfinishedChainBackup(of: store)).rows.first?[0] ?? nil
    }

    /// The query of `backupOfUnfinishedChain`, also read as a column of the store's snapshot.
    static func unfinishedChainBackup(of store: String) -> SQL {
        """
        SELECT s.schema FROM \(ident: MetadataSchema.schema, table) AS s JOIN pg_namespace AS n ON n.nspname = s.schema
        WHERE s.store = \(store) AND s.role = 'backup' AND NOT s.chain_finished LIMIT 1
        """
    }

    /// The run reached its target: a backup of the store is no longer one of an unfinished chain.
    static func finishChain(store: String, on connection: PostgresConnection) throws {
        _ = try connection.execute(finishingChain(store: store))
    }

    /// The statement of `finishChain`.
    static func finishingChain(store: String) -> SQL {
        "UPDATE \(ident: MetadataSchema.schema, table) SET chain_finished = true WHERE store = \(store) AND role = 'backup'"
    }

    /// Upgrading layout 1: a store's `<store>~staging` holding a checkpoint table, and the
    /// `<store>~` or `<store>~retired` its last heavyweight step renamed it to (as its history
    /// records), are adopted — unless they are stores of their own.
    static func adoptLayoutOneSchemas(on connection: PostgresConnection) throws {
        let meta = MetadataSchema.schema
        let stores = try connection.execute("SELECT store FROM \(ident: meta, "stores")").rows.compactMap { $0[0] }
        for store in stores {
            let staging = HeavyweightMigration.stagingSchema(for: store)
            _ = try connection.execute("""
                INSERT INTO \(ident: meta, table) (schema, store, role, version_name)
                SELECT \(staging), \(store), 'staging', NULL
                WHERE to_regclass(\(quoteIdentifier(staging) + "." + quoteIdentifier(CheckpointTable.legacyTable))) IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM \(ident: meta, "stores") WHERE store = \(staging))
                ON CONFLICT (schema) DO NOTHING
                """)
            for (schema, role) in [(HeavyweightMigration.backupSchema(for: store), Role.backup), (HeavyweightMigration.retiredSchema(for: store), .retired)] {
                let rename = "ALTER SCHEMA \(quoteIdentifier(store)) RENAME TO \(quoteIdentifier(schema))"
                _ = try connection.execute("""
                    INSERT INTO \(ident: meta, table) (schema, store, role, version_name)
                    SELECT \(schema), \(store), \(role.rawValue), m.from_version FROM \(ident: meta, "migrations") AS m
                    WHERE m.store = \(store) AND m.kind = 'heavyweight' AND m.outcome = 'succeeded'
                      AND m.statements @> jsonb_build_array(\(rename)::text)
                      AND EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = \(schema))
                      AND NOT EXISTS (SELECT 1 FROM \(ident: meta, "stores") WHERE store = \(schema))
                    ORDER BY m.id DESC LIMIT 1
                    ON CONFLICT (schema) DO NOTHING
                    """)
            }
        }
    }
}

/// A schema in the place of a backup or staging schema is not orchestrator's own: refused,
/// with nothing changed.
public struct ForeignSchema: Error, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}
