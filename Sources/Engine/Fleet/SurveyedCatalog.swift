import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// What `fleet apply`'s survey found of a store: its catalog compared with the contract of the
/// version its metadata recorded, without blocking drift, and the catalog's fingerprint read
/// before that comparison's read (so a change made between the two shows as a different
/// fingerprint, never as a missed one); then, read once for all the server's stores, its row
/// estimates and its replication topology with the server's `ReplicationFingerprint`, read
/// before them.
public struct SurveyedCatalog: Sendable, Hashable, Codable {
    public var versionName: String
    public var modelHash: String
    public var fingerprint: String
    /// The statistics' row counts, as the survey read them.
    public var rowEstimates: RowEstimates?
    /// The store's topology, and the server's replication fingerprint read before it.
    public var replication: ReplicationTopology?
    public var replicationFingerprint: String?
    /// The store's extra tables and columns (the team's own, `extra` drift), as the survey's
    /// catalog read found them: what a plan that may drop them (`apply --online` rebuilding a
    /// table, `--no-backup`) needs of the catalog. Under the lock, while the fingerprint holds,
    /// only whether each holds anything is read, and nothing when there are none. Nil in a
    /// journal of an earlier release: the drift is read under the lock.
    public var extras: [Extra]?

    public struct Extra: Sendable, Hashable, Codable {
        public var table: String
        /// Nil for a whole extra table.
        public var column: String?
    }

    public init(versionName: String, modelHash: String, fingerprint: String, extras: [Extra]? = nil) {
        self.versionName = versionName
        self.modelHash = modelHash
        self.fingerprint = fingerprint
        self.extras = extras
    }

    /// The extra tables and columns among a store's drift items.
    static func extras(in items: [DriftItem]) -> [Extra] {
        items.filter { $0.kind == .extra && ($0.object == .table || $0.object == .column) }.map { Extra(table: $0.table, column: $0.column) }
    }

    /// The surveyed extras with whether each holds anything, read now (under the lock): values
    /// written since the survey count. No statement when there are none.
    func readExtraObjects(store: String, on connection: PostgresConnection) throws -> [ExtraObject] {
        let items = (extras ?? []).map { DriftItem(kind: .extra, object: $0.column == nil ? .table : .column, table: $0.table, column: $0.column, expected: nil, found: nil) }
        guard !items.isEmpty else { return [] }
        return try ExtraObjectReader.read(DriftReport(version: versionName, items: items), store: store, on: connection)
    }

    /// What of the survey still holds under the store's lock.
    struct Recheck {
        /// The survey's verdict (no blocking drift) stands: the drift check's catalog read is
        /// left out.
        var catalogHolds = false
        /// The store's topology, when the server's replication catalogs and the store's own are
        /// those the survey read it from.
        var replication: ReplicationTopology?
        var rowEstimates: RowEstimates?
    }

    /// For the store as `snapshot` shows it under its lock, in one statement: the same version
    /// in the metadata and the same catalog fingerprint keep the survey's drift verdict; the
    /// same replication fingerprint besides keeps its topology and row estimates. Nothing holds
    /// when the drift's extra objects are needed and the survey has none of them
    /// (`needsExtraObjects`: a journal of an earlier release, for an online step that may
    /// rebuild a table, a heavyweight step that drops the old store or finishes an unfinished
    /// chain): the caller reads everything.
    static func recheck(_ surveyed: SurveyedCatalog?, for snapshot: StoreSnapshot, needsExtraObjects: Bool, on connection: PostgresConnection) throws -> Recheck {
        guard let surveyed, !needsExtraObjects, let metadata = snapshot.metadata,
              metadata.versionName == surveyed.versionName, metadata.modelHash == surveyed.modelHash
        else { return Recheck() }
        let besides = surveyed.replicationFingerprint == nil ? nil : ReplicationFingerprint.expression(on: connection)
        return surveyed.verdict(try CatalogFingerprint.read(schemas: [snapshot.store], besides: besides, on: connection)[snapshot.store])
    }

    /// What holds, given the fingerprints read under the lock.
    private func verdict(_ found: (fingerprint: String, extra: String?)?) -> Recheck {
        guard let found, found.fingerprint == fingerprint else { return Recheck() }
        guard let replicationFingerprint, found.extra == replicationFingerprint else { return Recheck(catalogHolds: true) }
        return Recheck(catalogHolds: true, replication: replication, rowEstimates: rowEstimates)
    }

    /// What `plan` reads under a surveyed store's lock beside its snapshot, in one round trip
    /// (libpq's pipeline mode): the unfinished online step, the survey's recheck
    /// (`recheck`'s statement), the model's recorded versions and the expansion in flight.
    struct LockedReads {
        var runLeft: (from: String, to: String)?
        var survey: Recheck
        var recorded: [RecordedVersion]
        var expansion: ExpansionInFlight?
    }

    /// Nil where `recheck` reads nothing (no survey, another version, the extra objects needed
    /// and not surveyed)
    /// or where the metadata is of a layout without the checkpoint table: the caller reads each
    /// of them alone.
    static func readUnderLock(
        _ surveyed: SurveyedCatalog?, for snapshot: StoreSnapshot, needsExtraObjects: Bool, model: String, on connection: PostgresConnection
    ) throws -> LockedReads? {
        guard let surveyed, !needsExtraObjects, let metadata = snapshot.metadata,
              metadata.versionName == surveyed.versionName, metadata.modelHash == surveyed.modelHash,
              try CheckpointTable.exists(on: connection)
        else { return nil }
        let besides = surveyed.replicationFingerprint == nil ? nil : ReplicationFingerprint.expression(on: connection)
        let expansion = try ExpansionRecord.inFlightStatement(store: snapshot.store, on: connection)
        let results = try StatementPipeline.execute([
            OnlineCheckpoint.unfinishedStatement(store: snapshot.store),
            CatalogFingerprint.statement(schemas: [snapshot.store], besides: besides),
            StoreCatalog.recordedVersionsStatement(model: model),
        ] + (expansion.map { [$0] } ?? []), on: connection)
        let found = CatalogFingerprint.fingerprints(in: results[1])[snapshot.store]
        return LockedReads(
            runLeft: OnlineCheckpoint.unfinished(in: results[0]), survey: surveyed.verdict(found), recorded: StoreCatalog.recordedVersions(in: results[2]),
            expansion: expansion == nil ? nil : ExpansionRecord.inFlight(in: results[3])
        )
    }

    /// The snapshot's topology and row estimates (left out of its read when the store was
    /// surveyed): the survey's where they hold, else read now. The survey's row estimates only
    /// for a plan without mapping models: a heavyweight step's hazards (rows a mapping model
    /// leaves behind) count them, and they are read under the lock for it as for `apply`.
    static func complete(_ snapshot: inout StoreSnapshot, from recheck: Recheck, estimatesKept: Bool, on connection: PostgresConnection) throws {
        snapshot.replication = try recheck.replication ?? ReplicationCatalog.topology(store: snapshot.store, on: connection)
        guard snapshot.metadata != nil else { return }
        snapshot.rowEstimates = try (estimatesKept ? recheck.rowEstimates : nil) ?? StoreCatalog.rowEstimates(store: snapshot.store, on: connection)
    }
}
