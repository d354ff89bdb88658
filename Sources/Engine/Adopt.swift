import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// `adopt` refused: the schema is not one, is already a store, or differs from the contract.
public struct AdoptionRefused: Error, CustomStringConvertible {
    public var reasons: [String]
    public var description: String { (reasons + ["nothing was written"]).joined(separator: "\n") }
}

/// Makes a hand-made schema an orchestrator store at a version, when its tables match that
/// version's contract by the drift rules (extra objects allowed); the metadata is the only
/// thing written.
public enum StoreAdoption {
    /// 1. The schema exists, is not a store yet, and its name is free of the schemas made
    ///    beside stores.
    /// 2. Its drift from `version`'s contract has nothing missing or changed; else every
    ///    difference is the refusal.
    /// 3. Under the store's lock, checked again, then in one transaction: the metadata at
    ///    `version` and an `adopt` row in the history.
    /// Returns the drift (the extra objects, if any).
    public static func adopt(
        store: String, modelName: String, version: ModelVersion, lockWaitSeconds: Double,
        onLockWait: ([AdvisoryLockHolder]) -> Void = { _ in }, on connection: PostgresConnection
    ) throws -> DriftReport {
        let started = Date()
        // Checked before the metadata schema is made, so that a refusal writes nothing at all.
        _ = try check(store: store, version: version, on: connection)
        try MetadataSchema.bootstrap(on: connection)
        let lock = StoreLock(store: store, connection: connection)
        try lock.acquire(waitingAtMost: lockWaitSeconds, onWait: onLockWait)
        defer { lock.release() }
        let checked = try check(store: store, version: version, on: connection)
        try connection.transaction {
            try StoreMetadataWriter.setVersion(store: store, modelName: modelName, version: version, on: connection)
            try StoreMetadataWriter.recordEvent(
                store: store, kind: "adopt", from: nil, to: (version.name, VersionHash.hashes(of: version).model), statements: [],
                started: started, on: connection
            )
        }
        return checked
    }

    static func check(store: String, version: ModelVersion, on connection: PostgresConnection) throws -> DriftReport {
        let snapshot = try StoreCatalog.snapshot(store: store, on: connection)
        guard snapshot.schemaExists else {
            throw AdoptionRefused(reasons: ["schema \(quoteIdentifier(store)) does not exist: there is nothing to adopt (`orchestrator apply` creates a store)"])
        }
        if let metadata = snapshot.metadata {
            throw AdoptionRefused(reasons: ["schema \(quoteIdentifier(store)) is already an orchestrator store, at '\(metadata.versionName)'"])
        }
        if let reason = try StoreSchemas.nameConflict(store: store, on: connection) { throw AdoptionRefused(reasons: [reason]) }
        let drift = try DriftCheck.drift(of: store, from: version, on: connection)
        if !drift.blocking.isEmpty {
            throw AdoptionRefused(reasons: drift.blocking.map { "schema \(quoteIdentifier(store)) differs from the contract of '\(version.name)': \($0)" })
        }
        return drift
    }
}
