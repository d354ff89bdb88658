import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

extension SavedPlan {
    /// `plan` as a saved plan, with the fingerprints of what `migrator` computed it from: read
    /// now from the database and the files; `online`: planned for `apply --online`.
    public init(plan: MigrationPlan, migrator: StoreMigrator, online: Bool = false) throws {
        var versions: [String: String] = [:]
        for name in Set(plan.steps.flatMap { [$0.from, $0.to].compactMap { $0 } } + [plan.targetVersion]) {
            guard let version = migrator.model.version(named: name) else { continue }
            versions[name] = VersionHash.digest(of: NativeModelWriter.json(of: version))
        }
        let mappings = try plan.steps.filter { $0.kind == .heavyweight }.compactMap { step in
            try migrator.explicitMappings.first { $0.source == step.from && $0.destination == step.to }.map { mapping in
                MappingModel(source: mapping.source, destination: mapping.destination, file: mapping.file, sha256: try Self.fileDigest(mapping.file))
            }
        }
        let fingerprints = Fingerprints(
            storeMetadata: try Self.storeMetadataDigest(store: plan.store, on: migrator.connection),
            storeCatalog: try Self.catalogDigest(store: plan.store, on: migrator.connection),
            models: versions, mappingModels: mappings,
            options: Options(
                targetVersion: plan.targetVersion, keepBackup: migrator.keepBackup, streaming: migrator.forceStreaming,
                policies: migrator.policies.names.sorted(), online: online
            )
        )
        self.init(plan: plan, fingerprints: fingerprints)
    }

    /// The store's metadata row as text, hashed; "none" without one. `updated_at` is in it, so
    /// a store migrated away and back again does not look unchanged.
    static func storeMetadataDigest(store: String, on connection: PostgresConnection) throws -> String {
        guard try MetadataSchema.exists(on: connection) else { return "none" }
        let row = try connection.execute("""
            SELECT concat_ws(E'\\x01', model_name, version_name, model_hash, entity_hashes::text, version_identifiers::text, updated_at::text) AS row
            FROM \(ident: MetadataSchema.schema, "stores") WHERE store = \(store)
            """)
        return row.isEmpty ? "none" : VersionHash.digest(of: row.value(0, "row") ?? "")
    }

    /// Tables, columns (type, nullability, default), constraints and indexes of the store's
    /// schema, in a fixed order, hashed.
    static func catalogDigest(store: String, on connection: PostgresConnection) throws -> String {
        let result = try connection.execute("""
            SELECT 'column' AS kind, c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                       || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                       || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '') AS item
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE n.nspname = \(store) AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
            UNION ALL
            SELECT 'constraint', c.relname || '.' || k.conname || ' ' || pg_get_constraintdef(k.oid)
            FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = \(store)
            UNION ALL
            SELECT 'index', indexdef FROM pg_indexes WHERE schemaname = \(store)
            ORDER BY 1, 2
            """)
        return VersionHash.digest(of: result.rows.map { ($0[0] ?? "") + " " + ($0[1] ?? "") }.joined(separator: "\n"))
    }

    /// SHA-256 of a file, or of every file in a folder (an .xcmappingmodel package) by path.
    static func fileDigest(_ path: String) throws -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return "missing" }
        guard isDirectory.boolValue else {
            return VersionHash.digest(of: try Data(contentsOf: URL(fileURLWithPath: path)).base64EncodedString())
        }
        let files = (FileManager.default.subpaths(atPath: path) ?? []).sorted()
        var parts: [String] = []
        for file in files {
            let full = (path as NSString).appendingPathComponent(file)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: full, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            parts.append(file + "\u{1}" + (try Data(contentsOf: URL(fileURLWithPath: full)).base64EncodedString()))
        }
        return VersionHash.digest(of: parts.joined(separator: "\u{2}"))
    }
}
