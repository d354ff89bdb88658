import ObjectModel

/// What the store holds now, as read from its metadata. Built by the engine; plain data here.
public struct StoreSnapshot: Sendable, Hashable {
    public var store: String
    public var schemaExists: Bool
    public var metadata: StoreMetadata?
    /// How many rows the store's tables hold, as the catalog's statistics know.
    public var rowEstimates: RowEstimates
    /// The backup an earlier `apply` made in the first heavyweight step of a chain it did not
    /// finish (it crashed or failed later): the store as it was before that run, kept by this one.
    public var unfinishedChainBackup: String?
    /// The server's lock table, when known: a step that would lock more than it holds says so.
    public var lockTable: LockTableSettings?
    /// The store's tables and columns its version's contract does not have, read when a
    /// heavyweight step may drop the old store (`--no-backup`, an unfinished chain's backup
    /// kept) or an online step may rebuild a table (`ExtraObject.rebuildHazards`); empty otherwise.
    public var extraObjects: [ExtraObject] = []
    /// Publications, subscriptions, slots and standbys around the store (`ReplicationTopology`).
    public var replication = ReplicationTopology()
    /// What is beside the store: schemas, dependent objects, committed passes.
    public var surroundings = StoreSurroundings()

    public init(
        store: String, schemaExists: Bool, metadata: StoreMetadata?, rowEstimates: RowEstimates = RowEstimates(),
        unfinishedChainBackup: String? = nil, lockTable: LockTableSettings? = nil
    ) {
        self.store = store
        self.schemaExists = schemaExists
        self.metadata = metadata
        self.rowEstimates = rowEstimates
        self.unfinishedChainBackup = unfinishedChainBackup
        self.lockTable = lockTable
    }
}

/// Rows of a store by table and, where the statistics of `_entity` tell, by entity: estimates
/// the plan shows (rows a pass reads, rows a mapping model leaves behind), read by the engine
/// so that planning stays pure.
public struct RowEstimates: Sendable, Hashable, Codable {
    /// Table name -> rows; a table whose rows are not known yet (never analyzed, and no live
    /// rows counted) is absent.
    public var tables: [String: Int]
    /// Table name -> `_entity` value -> its share of the rows (0...1), from the column's most
    /// common values; absent for a table never analyzed.
    public var entityShares: [String: [String: Double]]

    public init(tables: [String: Int] = [:], entityShares: [String: [String: Double]] = [:]) {
        self.tables = tables
        self.entityShares = entityShares
    }

    public var total: Int { tables.values.reduce(0, +) }

    /// Rows of `entity`, stored in `table` with the concrete entities `tableEntities`: its
    /// share by the statistics; else every row of the table, exact when it is the table's only
    /// entity, an upper bound otherwise. Nil when the table's rows are not known.
    public func rows(of entity: String, in table: String, tableEntities: [String]) -> RowCount? {
        guard let rows = tables[table] else { return nil }
        if tableEntities == [entity] { return RowCount(rows: rows, isUpperBound: false) }
        guard let shares = entityShares[table], !shares.isEmpty else { return RowCount(rows: rows, isUpperBound: true) }
        if let share = shares[entity] { return RowCount(rows: Int((share * Double(rows)).rounded()), isUpperBound: false) }
        // Not among the most common values: at most the rows the others leave.
        return RowCount(rows: max(0, rows - Int((shares.values.reduce(0, +) * Double(rows)).rounded())), isUpperBound: true)
    }
}

/// An estimated number of rows; `isUpperBound` when it may be far more than there are.
public struct RowCount: Sendable, Hashable, CustomStringConvertible {
    public var rows: Int
    public var isUpperBound: Bool

    public init(rows: Int, isUpperBound: Bool) {
        self.rows = rows
        self.isUpperBound = isUpperBound
    }

    public var description: String { "\(isUpperBound ? "up to" : "about") \(rows) row\(rows == 1 ? "" : "s")" }
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
    /// Why the plan stops short of the target, when it does, each with its stable code.
    public var blockerDetails: [Blocker]
    /// The backup of an unfinished earlier run (`StoreSnapshot.unfinishedChainBackup`), which
    /// no step of this plan replaces.
    public var keptBackup: String?
    /// Planned for `apply --online`: what the application built on the tables the online steps
    /// rebuild, each as "view public.names on store.animal (step 1 of 1 rebuilds store.animal)";
    /// `apply --online` refuses such a plan (`DependentObjects`), nothing changed.
    public var dependentsOfRebuiltTables: [String] = []
    /// The store's replication, as the snapshot read it (`ReplicationTopology`).
    public var replication = ReplicationTopology()
    /// The form the steps were planned in (`Planner.plan(…, mode:)`): online, each step runs
    /// while the application writes, or says why it cannot (`PlannedStep.onlineRefusals`).
    public var mode: PlanMode = .offline

    public var isUpToDate: Bool { status == .upToDate }
    /// True when applying the steps brings the store to the target version.
    public var isExecutable: Bool { blockerDetails.isEmpty }
    /// The blockers' messages.
    public var blockers: [String] { blockerDetails.map(\.message) }
}

public enum PlanningError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The store's hashes match no version in the files or in the database; the versions that
    /// could not be read or validated could not be compared.
    case unknownStoreVersion(store: String, modelHash: String, unusableVersions: [UnusableVersion] = [])
    /// A schema by that name exists but is not a store.
    case schemaWithoutMetadata(store: String)
    case unknownTargetVersion(name: String, available: [String])
    /// The target version's file cannot be read or fails validation.
    case unusableTargetVersion(UnusableVersion)

    public var description: String {
        switch self {
        case .unknownStoreVersion(let store, let hash, let unusable):
            (["store '\(store)' has model hash \(hash), which matches no version of the model in its files or in the database's record of versions"]
                + unusable.flatMap { version in version.issues.map { "version '\(version.name)' could not be compared, it cannot be used: \($0)" } })
                .joined(separator: "\n")
        case .unusableTargetVersion(let version):
            version.issues.map { "version '\(version.name)' cannot be used: \($0)" }.joined(separator: "\n")
        case .schemaWithoutMetadata(let store):
            "schema '\(store)' exists but holds no orchestrator store (no metadata in orchestrator.stores); refusing to touch it"
        case .unknownTargetVersion(let name, let available):
            "no version named '\(name)' (versions: \(available.joined(separator: ", ")))"
        }
    }
}
