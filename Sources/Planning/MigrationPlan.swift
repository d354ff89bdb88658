import ObjectModel

/// What the store holds now, as read from its metadata. Built by the engine; plain data here.
public struct StoreSnapshot: Sendable, Hashable {
    public var store: String
    public var schemaExists: Bool
    public var metadata: StoreMetadata?
    /// The server's lock table, when known: a step that would lock more than it holds says so.
    public var lockTable: LockTableSettings?

    public init(store: String, schemaExists: Bool, metadata: StoreMetadata?, lockTable: LockTableSettings? = nil) {
        self.store = store
        self.schemaExists = schemaExists
        self.metadata = metadata
        self.lockTable = lockTable
    }
}

/// The version hashes recorded for a store (Core Data's NSStoreModelVersionHashes).
public struct StoreMetadata: Sendable, Hashable {
    public var modelName: String
    public var versionName: String
    public var modelHash: String
    public var entityHashes: [String: String]
    public var versionIdentifiers: [String]

    public init(modelName: String, versionName: String, modelHash: String, entityHashes: [String: String], versionIdentifiers: [String]) {
        self.modelName = modelName
        self.versionName = versionName
        self.modelHash = modelHash
        self.entityHashes = entityHashes
        self.versionIdentifiers = versionIdentifiers
    }
}

/// A version recorded in the database's own history of applied versions.
public struct RecordedVersion: Sendable, Hashable {
    public var name: String
    public var modelHash: String

    public init(name: String, modelHash: String) {
        self.name = name
        self.modelHash = modelHash
    }
}

public struct MigrationPlan: Sendable, Hashable {
    public enum Status: Sendable, Hashable {
        /// No store yet: the plan creates it.
        case missing
        case upToDate
        /// The store is at another version; `steps` migrate it (empty when no path exists yet).
        case migrationRequired
    }

    public var store: String
    public var modelName: String
    /// The version the plan brings the store to (the current version unless asked otherwise).
    public var targetVersion: String
    public var targetModelHash: String
    public var currentVersion: String
    /// The version the store was made with, found by its hashes; nil when there is no store.
    public var storeVersion: String?
    public var storeModelHash: String?
    /// True when the store's version was found only in the database's record of versions.
    public var storeVersionIsRecordedOnly: Bool
    public var status: Status
    public var steps: [PlannedStep]
    /// Why the plan stops short of the target, when it does.
    public var blockers: [String]

    public var isUpToDate: Bool { status == .upToDate }
    /// True when applying the steps brings the store to the target version.
    public var isExecutable: Bool { blockers.isEmpty }
}

public enum PlanningError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The store's hashes match no version in the files or in the database.
    case unknownStoreVersion(store: String, modelHash: String)
    /// A schema by that name exists but is not a store.
    case schemaWithoutMetadata(store: String)
    case unknownTargetVersion(name: String, available: [String])

    public var description: String {
        switch self {
        case .unknownStoreVersion(let store, let hash):
            "store '\(store)' has model hash \(hash), which matches no version of the model in its files or in the database's record of versions"
        case .schemaWithoutMetadata(let store):
            "schema '\(store)' exists but holds no orchestrator store (no metadata in orchestrator.stores); refusing to touch it"
        case .unknownTargetVersion(let name, let available):
            "no version named '\(name)' (versions: \(available.joined(separator: ", ")))"
        }
    }
}
