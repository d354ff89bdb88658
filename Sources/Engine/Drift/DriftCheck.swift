import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// How a store differs from the contract of the version its metadata records.
public struct DriftReport: Sendable, Hashable {
    /// The version whose contract the store was compared with.
    public var version: String
    public var items: [DriftItem]

    public var blocking: [DriftItem] { items.filter(\.isBlocking) }
}

/// Compares a store's live catalog with its version's contract: the store `CreateStore` makes
/// for that version, built as temporary tables inside a transaction that is rolled back, so that
/// PostgreSQL normalises its types, defaults and CHECKs exactly as it did the store's. The
/// contracts built are kept (`ContractCatalogs`); the store's catalog is read at each check.
public enum DriftCheck {
    /// How long reading the store's catalog waits for a table another session holds in ACCESS
    /// EXCLUSIVE mode (a migration, VACUUM FULL): `pg_get_expr`, `pg_get_constraintdef` and
    /// `pg_get_indexdef` lock the table they describe. Then the drift is not known.
    static let lockTimeoutMilliseconds = 500

    /// The drift of `store` from `version`'s contract; `DriftNotReadable` when a table of the
    /// store stays locked longer than `lockTimeoutMilliseconds`. The store's catalog is read
    /// anew; the contract is `contracts`' (built with that read when it has none yet).
    public static func drift(
        of store: String, from version: ModelVersion, on connection: PostgresConnection, contracts: ContractCatalogs = .shared
    ) throws -> DriftReport {
        let catalogs: (contract: SchemaCatalog, schemas: [String: SchemaCatalog])
        do {
            catalogs = try contracts.catalogs(of: version, with: [store], lockTimeoutMilliseconds: lockTimeoutMilliseconds, on: connection)
        } catch let error as PostgresError where error.sqlState == .lockNotAvailable {
            throw DriftNotReadable(store: store)
        } catch let error as PostgresError where error.sqlState == .readOnlySQLTransaction {
            throw DriftNotReadable(store: store, onReadOnlyServer: true)
        }
        return DriftReport(version: version.name, items: StoreDrift.compare(expected: catalogs.contract, found: catalogs.schemas[store] ?? SchemaCatalog()))
    }

    /// The drift of a store from the version its metadata records; nil when the store has no
    /// metadata or its version is known neither in the files nor in the database's record.
    public static func drift(
        of snapshot: StoreSnapshot, model: VersionedModel, on connection: PostgresConnection, contracts: ContractCatalogs = .shared
    ) throws -> DriftReport? {
        guard let metadata = snapshot.metadata,
              let version = try version(named: metadata.versionName, withModelHash: metadata.modelHash, modelName: metadata.modelName, model: model, on: connection)
        else { return nil }
        return try drift(of: snapshot.store, from: version, on: connection, contracts: contracts)
    }

    /// Throws `StoreDrifted` when the store lacks or changed objects of its version's contract.
    /// A store whose tables another session holds locked is not checked: `apply` waits for
    /// them with its own lock timeout and retries, as it did before the check.
    /// Returns the drift (extra objects only), nil when it was not read.
    @discardableResult
    public static func requireNoBlockingDrift(
        _ snapshot: StoreSnapshot, model: VersionedModel, on connection: PostgresConnection, contracts: ContractCatalogs = .shared
    ) throws -> DriftReport? {
        let report: DriftReport?
        do {
            report = try drift(of: snapshot, model: model, on: connection, contracts: contracts)
        } catch is DriftNotReadable {
            return nil
        }
        guard let report, !report.blocking.isEmpty else { return report }
        throw StoreDrifted(store: snapshot.store, version: report.version, items: report.blocking)
    }

    /// The version with that model hash: the one of that name in the model's files, else another
    /// there with that hash, else the definition the database recorded when it was applied.
    /// The name first: versions that differ only in what the hashes leave out (a default value)
    /// share a hash, and each has its own contract.
    static func version(named name: String, withModelHash modelHash: String, modelName: String, model: VersionedModel, on connection: PostgresConnection) throws -> ModelVersion? {
        if let named = model.version(named: name), model.problems(ofVersion: name).isEmpty, VersionHash.hashes(of: named).model == modelHash {
            return named
        }
        if let version = model.usableVersion(withModelHash: modelHash).version { return version }
        guard try MetadataSchema.exists(on: connection) else { return nil }
        let result = try connection.execute("""
            SELECT version_name, definition FROM \(ident: MetadataSchema.schema, "model_versions")
            WHERE model_name = \(modelName) AND model_hash = \(modelHash)
            """)
        guard !result.isEmpty, let name = result.value(0, "version_name"), let definition = result.value(0, "definition") else { return nil }
        return try? NativeModelLoader.parseVersion(definition, name: name, file: "the database's record of '\(name)'")
    }
}

/// `plan` and `apply` refuse a store that lacks or changed objects of its version's contract.
public struct StoreDrifted: Error, CustomStringConvertible {
    public var store: String
    public var version: String
    public var items: [DriftItem]

    /// One line per object; the last says that nothing was changed.
    public var description: String {
        var lines = items.map { "store \(store) differs from the contract of its version '\(version)': \($0)" }
        lines[lines.count - 1] += "; nothing was changed (put back what is missing or changed as the contract has it; `orchestrator status` lists every difference)"
        return lines.joined(separator: "\n")
    }
}

/// A table of the store stayed locked by another session while its catalog was read, or the
/// server is read-only (a streaming standby), where the contract's temporary tables cannot be
/// made.
public struct DriftNotReadable: Error, CustomStringConvertible {
    public var store: String
    public var onReadOnlyServer = false
    public var description: String {
        if onReadOnlyServer {
            return "the drift of store \(store) is not checked on a read-only server (a standby): its contract is built as temporary tables, which only a writable server makes; a standby replays its primary's catalog, so check the drift there"
        }
        return "the drift of store \(store) could not be read: a table of it is locked by another session (a migration?) for longer than \(DriftCheck.lockTimeoutMilliseconds) ms"
    }
}
