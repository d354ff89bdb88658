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

    public enum Role: String, Sendable {
        case staging, backup, retired

        var description: String {
            switch self {
            case .staging: "staging schema"
            case .backup: "backup"
            case .retired: "retired old store"
            }
        }
    }

    /// Store names ending like the schemas made beside a store are refused: `x~` would be the
    /// backup of `x`, `x~staging` its staging schema.
    public static let reservedSuffixes = ["~", "~staging", "~retired"]

    /// Why `schema` cannot be dropped or replaced as the `role` schema of `store`; nil when it
    /// does not exist or is recorded as exactly that.
    static func conflict(_ schema: String, role: Role, store: String, on connection: PostgresConnection) throws -> String? {
        let result = try connection.execute("""
            SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = \(schema)) AS present,
                   EXISTS (SELECT 1 FROM \(ident: MetadataSchema.schema, "stores") WHERE store = \(schema)) AS is_store,
                   EXISTS (SELECT 1 FROM \(ident: MetadataSchema.schema, table) WHERE schema = \(schema) AND store = \(store) AND role = \(role.rawValue)) AS is_ours
            """)
        let name = quoteIdentifier(schema)
        if result.bool(0, "is_store") == true {
            return "schema \(name), which would be the \(role.description) of store \(store), is a store of its own; nothing was changed (give one of the two stores another name)"
        }
        guard result.bool(0, "present") == true, result.bool(0, "is_ours") != true else { return nil }
        return "schema \(name) exists and was not made by orchestrator as the \(role.description) of store \(store); it is never dropped or replaced, and nothing was changed (rename or drop it yourself if it is not needed)"
    }

    /// Why `store` cannot be created under that name; nil when it can.
    static func nameConflict(store: String, on connection: PostgresConnection) throws -> String? {
        if let suffix = reservedSuffixes.first(where: store.hasSuffix) {
            return "store name \(store) ends with '\(suffix)', which orchestrator keeps for the schemas it makes beside a store (<store>~, <store>~staging, <store>~retired); choose another name"
        }
        // The other way round: a store (named before this rule) in the place of one of its schemas.
        let derived = [HeavyweightMigration.backupSchema(for: store), HeavyweightMigration.stagingSchema(for: store), HeavyweightMigration.retiredSchema(for: store)]
        if try MetadataSchema.exists(on: connection) {
            let taken = try connection.execute("SELECT store FROM \(ident: MetadataSchema.schema, "stores") WHERE store IN (\(SQL.joined(derived.map { "\($0)" }, separator: ", "))) ORDER BY store")
            if let other = taken.rows.first?[0] ?? nil {
                return "store name \(store) would have its backup and staging schemas where store \(other) is; choose another name"
            }
        }
        guard try MetadataSchema.hasStoreSchemas(on: connection) else { return nil }
        let owner = try connection.execute("SELECT store, role FROM \(ident: MetadataSchema.schema, table) WHERE schema = \(store)")
        guard !owner.isEmpty, let other = owner.value(0, "store") else { return nil }
        let role = Role(rawValue: owner.value(0, "role") ?? "")?.description ?? "schema"
        return "store name \(store) is the \(role) of store \(other); choose another name"
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
        return try connection.execute("""
            SELECT s.schema FROM \(ident: MetadataSchema.schema, table) AS s JOIN pg_namespace AS n ON n.nspname = s.schema
            WHERE s.store = \(store) AND s.role = 'backup' AND NOT s.chain_finished
            """).rows.first?[0] ?? nil
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

extension StoreSchemas {
    /// Why `plan` cannot run: a store name that collides with the schemas made beside stores,
    /// or a schema in the place of one of a heavyweight step's that is not its own. `apply`
    /// checks them again under the store's lock, and once more right before each drop or
    /// rename. Layout 1 metadata is checked by `apply` after upgrading it.
    static func blockers(of plan: MigrationPlan, on connection: PostgresConnection) throws -> [Blocker] {
        if plan.status == .missing {
            return try nameConflict(store: plan.store, on: connection).map { [Blocker(.storeNameConflict, $0)] } ?? []
        }
        var blockers: [Blocker] = []
        guard try MetadataSchema.hasStoreSchemas(on: connection) else { return [] }
        for step in plan.steps {
            guard let staging = step.stagingSchema else { continue }
            let old = step.backupSchema.map { ($0, Role.backup) } ?? (HeavyweightMigration.retiredSchema(for: plan.store), .retired)
            for (schema, role) in [(staging, Role.staging), old] {
                if let reason = try conflict(schema, role: role, store: plan.store, on: connection) {
                    let blocker = Blocker(.foreignSchema, reason)
                    if !blockers.contains(blocker) { blockers.append(blocker) }
                }
            }
        }
        return blockers
    }
}
