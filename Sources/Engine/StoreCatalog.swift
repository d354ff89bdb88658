import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// Reads what the database knows about a store: whether its schema exists and its metadata.
public enum StoreCatalog {
    public static func snapshot(store: String, on connection: PostgresConnection) throws -> StoreSnapshot {
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

    static func decodeJSON<T: Decodable>(_ text: String?) -> T? {
        guard let text else { return nil }
        return try? JSONDecoder().decode(T.self, from: Data(text.utf8))
    }
}
