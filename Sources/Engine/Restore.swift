import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// What `restore` did.
public struct RestoreReport: Sendable, Hashable {
    public var store: String
    /// The version the store was at, now kept as `undoneSchema`.
    public var fromVersion: String
    /// The backup's version, the store's now.
    public var toVersion: String
    public var undoneSchema: String
}

/// `restore` refused; nothing was changed.
public struct RestoreRefused: Error, CustomStringConvertible {
    public var reason: String
    public var description: String { reason + "; nothing was changed" }
}

/// Undo of a heavyweight step: the backup `<store>~` becomes the store again, with its metadata,
/// and the store it replaces is kept as `<store>~undone`.
public enum StoreRestore {
    public static func undoneSchema(for store: String) -> String { StoreNaming.shortened(store + "~undone") }

    /// 1. The store must be one (metadata), with a backup that orchestrator recorded as its own,
    ///    of a version whose hashes are known (the history of the step that made it, then the
    ///    model's files or the database's record), that lacks or changed nothing of that
    ///    version's contract (the drift rules of `adopt`: extra objects allowed);
    ///    `<store>~undone` must not exist.
    /// 2. Under the store's lock (what a crash after a swap left removed first), the backup
    ///    checked again, then in one transaction: the store renamed to `<store>~undone`, the
    ///    backup to the store, the metadata set to the backup's version, and a `restore` row in
    ///    the history.
    public static func restore(
        store: String, model: VersionedModel, lockWaitSeconds: Double, onLockWait: ([AdvisoryLockHolder]) -> Void = { _ in },
        on connection: PostgresConnection
    ) throws -> RestoreReport {
        let started = Date()
        func storeMetadata() throws -> StoreMetadata {
            guard try MetadataSchema.hasStoreSchemas(on: connection), let metadata = try StoreCatalog.snapshot(store: store, on: connection).metadata else {
                throw RestoreRefused(reason: "store \(store) does not exist (no metadata in orchestrator.stores): there is nothing to restore")
            }
            return metadata
        }
        let before = try storeMetadata()
        let contracts = ContractCatalogs.shared
        try requireIntact(try backupVersion(store: store, modelName: before.modelName, model: model, on: connection), of: store, contracts: contracts, on: connection)
        _ = try StoreCleanup.removeLeftovers(
            store: store, on: connection, lockWaitSeconds: lockWaitSeconds, policy: ApplyOptions().executionPolicy, onLockWait: onLockWait
        )
        let lock = StoreLock(store: store, connection: connection)
        try lock.acquire(waitingAtMost: lockWaitSeconds, onWait: onLockWait)
        defer { lock.release() }
        let metadata = try storeMetadata()
        let backup = try backupVersion(store: store, modelName: metadata.modelName, model: model, on: connection)
        try requireIntact(backup, of: store, contracts: contracts, on: connection)
        let undone = undoneSchema(for: store)
        if !(try connection.execute("SELECT 1 FROM pg_namespace WHERE nspname = \(undone)")).isEmpty {
            throw RestoreRefused(reason: "schema \(quoteIdentifier(undone)) exists (an earlier restore kept the store it replaced there); drop or rename it first")
        }
        let statements: [SQL] = [
            "ALTER SCHEMA \(ident: store) RENAME TO \(ident: undone)",
            "ALTER SCHEMA \(ident: backup.schema) RENAME TO \(ident: store)",
        ]
        try connection.transaction {
            // Publications stay on the store's name (docs/replication.md), not on `<store>~undone`.
            try StorePublications.carrying(schema: store, tables: nil, on: connection) {
                for statement in statements { try connection.execute(statement) }
            }
            for statement in try StorePublications.leaving(undone, on: connection) { try connection.execute(statement) }
            try StoreSchemas.unregister(backup.schema, on: connection)
            try StoreMetadataWriter.setVersion(store: store, modelName: metadata.modelName, version: backup.version, on: connection)
            try StoreMetadataWriter.recordEvent(
                store: store, kind: "restore", from: (metadata.versionName, metadata.modelHash),
                to: (backup.version.name, VersionHash.hashes(of: backup.version).model), statements: statements, started: started, on: connection
            )
        }
        return RestoreReport(store: store, fromVersion: metadata.versionName, toVersion: backup.version.name, undoneSchema: undone)
    }

    /// Refuses a backup that lacks or changed objects of its version's contract (a table dropped,
    /// a column lost, a schema of that name that is not the backup at all), one line each.
    static func requireIntact(
        _ backup: (schema: String, version: ModelVersion), of store: String, contracts: ContractCatalogs, on connection: PostgresConnection
    ) throws {
        let blocking = try DriftCheck.drift(of: backup.schema, from: backup.version, on: connection, contracts: contracts).blocking
        guard !blocking.isEmpty else { return }
        let name = quoteIdentifier(backup.schema)
        var lines = blocking.map { "the backup \(name) of store \(store) differs from the contract of '\(backup.version.name)': \($0)" }
        lines[lines.count - 1] += "; restoring it would break the store"
        throw RestoreRefused(reason: lines.joined(separator: "\n"))
    }

    /// The backup schema of `store` and its version, or why it cannot be restored.
    static func backupVersion(store: String, modelName: String, model: VersionedModel, on connection: PostgresConnection) throws -> (schema: String, version: ModelVersion) {
        let schema = HeavyweightMigration.backupSchema(for: store)
        let name = quoteIdentifier(schema)
        guard !(try connection.execute("SELECT 1 FROM pg_namespace WHERE nspname = \(schema)")).isEmpty else {
            throw RestoreRefused(reason: "store \(store) has no backup: schema \(name) does not exist (a heavyweight step keeps one unless --no-backup)")
        }
        if let reason = try StoreSchemas.conflict(schema, role: .backup, store: store, on: connection) { throw RestoreRefused(reason: reason) }
        // The step that made the backup recorded the hash of the version it started from.
        let result = try connection.execute("""
            SELECT s.version_name, (SELECT m.from_hash FROM \(ident: MetadataSchema.schema, "migrations") AS m
                                    WHERE m.store = s.store AND m.kind = 'heavyweight' AND m.outcome = 'succeeded'
                                      AND m.from_version = s.version_name ORDER BY m.id DESC LIMIT 1) AS model_hash
            FROM \(ident: MetadataSchema.schema, StoreSchemas.table) AS s WHERE s.schema = \(schema)
            """)
        guard !result.isEmpty, let versionName = result.value(0, "version_name") else {
            throw RestoreRefused(reason: "the backup \(name) of store \(store) does not record its version")
        }
        guard let hash = result.value(0, "model_hash"),
              let version = try DriftCheck.version(named: versionName, withModelHash: hash, modelName: modelName, model: model, on: connection)
        else {
            throw RestoreRefused(reason: "the backup \(name) of store \(store) holds version '\(versionName)', whose model hash is known neither from the history nor from the model's files or the database's record of versions")
        }
        return (schema, version)
    }
}
