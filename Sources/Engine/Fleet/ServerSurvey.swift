import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// Every store of one server, read in bulk: the metadata of all of them in one query, what is
/// in progress in three more, and their catalogs with the four queries of one store's (no
/// table lock is kept by them), a part of the stores at a time (`storesHeldAtOnce`), compared
/// in memory with each version's contract, built once on this connection (`ContractCatalogs`).
public struct ServerSurvey {
    public var server: FleetServer
    public var connection: PostgresConnection
    public var model: VersionedModel
    /// The version the fleet goes to.
    public var target: ModelVersion
    public var contracts: ContractCatalogs
    /// Opens another session to the server: the catalogs of many stores are read in parts on
    /// that many sessions at once (`readers`), each part as one read. Nil: `connection` alone.
    public var connectReader: (@Sendable () throws -> PostgresConnection)?
    /// Sessions reading catalogs at once, `connection` included, when `connectReader` is given.
    public var readers = min(4, max(2, ProcessInfo.processInfo.activeProcessorCount))
    /// The fewest stores one reader's part holds (fewer stores are read on `connection`
    /// alone), and the size of a part: the survey holds at most `readers` parts' catalogs at
    /// once (`storesHeldAtOnce`), whatever the number of stores.
    public var storesPerReader = 250
    /// `fleet apply`: each store's catalog fingerprint is read before its catalog, and a store
    /// found without blocking drift carries both and its extra tables and columns
    /// (`FleetStoreState.surveyedCatalog`), so that its check under the lock compares the
    /// fingerprint instead of reading the catalog again.
    public var readsFingerprints = false

    public init(
        server: FleetServer, connection: PostgresConnection, model: VersionedModel, target: ModelVersion, contracts: ContractCatalogs = .shared,
        connectReader: (@Sendable () throws -> PostgresConnection)? = nil
    ) {
        self.server = server
        self.connection = connection
        self.model = model
        self.target = target
        self.contracts = contracts
        self.connectReader = connectReader
    }

    /// 1. The stores: the metadata's rows of this model, and every one named by a pattern.
    /// 2. Stores in progress: held by an `apply` (its advisory lock), an unfinished online step
    ///    or heavyweight chain.
    /// 3. The version of each, by its model hash; the catalogs of those at a known version,
    ///    compared with their version's contract.
    public func states() throws -> [FleetStoreState] {
        let rows = try storeRows()
        let targetHash = VersionHash.hashes(of: target).model
        let recorded = try StoreCatalog.recordedVersions(model: model.name, on: connection)
        let busy = try storesInProgress(rows.map(\.store))
        var states: [FleetStoreState] = []
        states.reserveCapacity(rows.count)
        var toCompare: [(index: Int, version: ModelVersion, recorded: String)] = []
        var versions: [String: ModelVersion?] = [:]
        // Hashing the model's versions is the costly part of a match: once per model hash and
        // recorded version.
        var matches: [String: StoreVersionMatch] = [:]
        for row in rows {
            let fleetStore = FleetStore(server: server.name, store: row.store)
            guard let hash = row.modelHash, row.schemaExists else {
                states.append(FleetStoreState(store: fleetStore, status: .missing))
                continue
            }
            // Versions differing only in fetch indexes share a hash: the recorded name tells them apart.
            let matchKey = "\(row.versionName)\u{0}\(hash)"
            let match = matches[matchKey] ?? StoreVersionMatch(
                storeModelHash: hash, storeVersionName: row.versionName, targetModelHash: targetHash, target: target, model: model, recordedVersions: recorded
            )
            matches[matchKey] = match
            var state = FleetStoreState(store: fleetStore, status: match.isAtTarget ? .upToDate : .migrationRequired, version: match.versionName, modelHash: hash)
            state.expansion = row.expansion
            if let reason = busy[row.store] {
                state.status = .inProgress
                state.detail = reason
                state.unfinishedExpand = reason.hasSuffix(Self.unfinishedExpandMark)
            } else if match.versionName == nil || (match.isRecordedOnly && !match.isCompatible) {
                state.status = .unknownVersion
                state.detail = "model hash \(hash) is no version of \(model.name)" + (match.isRecordedOnly ? " in the files (known only from the database's record)" : "")
            } else {
                let key = "\(row.versionName)\u{0}\(hash)"
                if versions[key] == nil {
                    versions[key] = try DriftCheck.version(named: row.versionName, withModelHash: hash, modelName: model.name, model: model, on: connection)
                }
                if let version = versions[key] ?? nil { toCompare.append((states.count, version, row.versionName)) }
            }
            states.append(state)
        }
        // Looked up once per version: a lookup reads the session's printing settings, a
        // transaction of its own, and nothing changes them during the survey.
        var expected: [ModelVersion: SchemaCatalog] = [:]
        // The catalogs are held a part at a time, so memory stays flat however many stores
        // the server has.
        for part in Self.parts(of: toCompare, size: storesHeldAtOnce) {
            let catalogs = try readCatalogsInParts(part.map { states[$0.index].store.store })
            for (index, version, recorded) in part {
                guard let live = catalogs[states[index].store.store] else {
                    states[index].status = .inProgress
                    states[index].detail = DriftNotReadable(store: states[index].store.store).description
                    continue
                }
                let contract = try expected[version] ?? contracts.contract(of: version, on: connection)
                expected[version] = contract
                let drift = StoreDrift.compare(expected: contract, found: live.catalog)
                let blocking = drift.filter(\.isBlocking)
                if !blocking.isEmpty {
                    states[index].status = .drifted
                    states[index].detail = blocking.map(\.description).joined(separator: "; ")
                } else if let fingerprint = live.fingerprint, let hash = states[index].modelHash {
                    states[index].surveyedCatalog = SurveyedCatalog(
                        versionName: recorded, modelHash: hash, fingerprint: fingerprint, extras: SurveyedCatalog.extras(in: drift)
                    )
                }
            }
            Self.releaseFreedMemory()
        }
        // `fleet apply` judges each store by its own plan under the lock, as `apply` does.
        if !readsFingerprints { try judgeViews(of: &states) }
        try readSurroundings(of: &states)
        return states
    }

    /// Two versions live: the views of the version not in the store's tables are part of its contract, as
    /// `status` judges them (`ViewsDrift`): a view or a column missing makes the store
    /// drifted. One statement for all the server's expanded stores.
    func judgeViews(of states: inout [FleetStoreState]) throws {
        let expanded = states.indices.filter { [.upToDate, .migrationRequired].contains(states[$0].status) && states[$0].expansion != nil }
        guard !expanded.isEmpty else { return }
        // A heavyweight step's views serve its new version (over the staging tables): judged
        // against that version's layout, as `status` judges them.
        let served = expanded.compactMap { index in
            states[index].expansion.map { expansion in
                var served = expansion
                if expansion.servesNewVersion(of: states[index].store.store) { served.oldVersion = expansion.newVersion }
                return served
            }
        }
        let drifts = try ViewsDrift.drifts(of: served, model: model, on: connection)
        for index in expanded {
            let blocking = (states[index].expansion.flatMap { drifts[$0.viewsSchema] } ?? []).filter(\.isBlocking)
            guard !blocking.isEmpty else { continue }
            states[index].status = .drifted
            states[index].detail = blocking.map(\.description).joined(separator: "; ")
        }
    }

    /// The row estimates and replication topology of the stores found without blocking drift,
    /// read for all of them at once (six statements; more for more stores than
    /// `storesHeldAtOnce`), after the server's replication
    /// fingerprint: under each store's lock, the same fingerprints mean the same topology
    /// (`SurveyedCatalog.recheck`).
    func readSurroundings(of states: inout [FleetStoreState]) throws {
        let surveyed = states.indices.filter { states[$0].surveyedCatalog != nil }
        guard !surveyed.isEmpty else { return }
        let fingerprint = try ReplicationFingerprint.read(on: connection)
        for part in Self.parts(of: surveyed, size: storesHeldAtOnce) {
            let stores = part.map { states[$0].store.store }
            let topologies = try ReplicationCatalog.topologies(of: stores, on: connection)
            let estimates = try StoreCatalog.rowEstimates(of: stores, on: connection)
            for index in part {
                let store = states[index].store.store
                guard var surveyedCatalog = states[index].surveyedCatalog else { continue }
                surveyedCatalog.replicationFingerprint = fingerprint
                surveyedCatalog.replication = topologies[store]
                surveyedCatalog.rowEstimates = estimates[store]
                states[index].surveyedCatalog = surveyedCatalog
            }
        }
    }

    struct StoreRow {
        var store: String
        var versionName: String
        var modelHash: String?
        var schemaExists: Bool
        var expansion: ExpansionInFlight?
    }

    /// The metadata's stores of the model that the patterns match (all of them without
    /// patterns), and each pattern without glob characters as a store even when unknown.
    func storeRows() throws -> [StoreRow] {
        var rows: [String: StoreRow] = [:]
        if try MetadataSchema.exists(on: connection) {
            // The expansions in flight (`apply --expand`) in the same read, where the table is.
            let expansions: SQL = try MetadataSchema.hasTable(ExpansionRecord.name, on: connection)
                ? "LEFT JOIN \(ident: MetadataSchema.schema, ExpansionRecord.name) AS e ON e.store = s.store"
                : "LEFT JOIN (SELECT NULL::text AS store, NULL::text AS old_version, NULL::text AS new_version, NULL::text AS views_schema) AS e ON false"
            let result = try connection.execute("""
                SELECT s.store, s.model_name, s.version_name, s.model_hash, n.oid IS NOT NULL AS schema_exists,
                       e.old_version, e.new_version, e.views_schema, \(ExpansionRecord.writtenTables(viewsSchema: "e.views_schema"))
                FROM \(ident: MetadataSchema.schema, "stores") AS s LEFT JOIN pg_namespace AS n ON n.nspname = s.store \(expansions)
                """)
            for row in result.rows.indices {
                guard let store = result.value(row, "store") else { continue }
                let named = server.stores.map { patterns in patterns.contains { StorePattern.matches($0, store) } } ?? true
                let isLiteral = server.stores?.contains(store) ?? false
                guard named, isLiteral || result.value(row, "model_name") == model.name else { continue }
                rows[store] = StoreRow(
                    store: store, versionName: result.value(row, "version_name") ?? "", modelHash: result.value(row, "model_hash"),
                    schemaExists: result.bool(row, "schema_exists") == true,
                    expansion: result.value(row, "old_version").map { old in
                        ExpansionInFlight(
                            oldVersion: old, newVersion: result.value(row, "new_version") ?? "", viewsSchema: result.value(row, "views_schema") ?? "",
                            writtenTables: ExpansionRecord.writtenTables(in: result, row: row)
                        )
                    }
                )
            }
        }
        for pattern in server.stores ?? [] where !StorePattern.isGlob(pattern) && rows[pattern] == nil {
            rows[pattern] = StoreRow(store: pattern, versionName: "", modelHash: nil, schemaExists: false)
        }
        return rows.values.sorted { $0.store < $1.store }
    }

    /// How a busy store's reason ends when it is an `apply --expand` stopped before its
    /// switch-over (`FleetStoreState.unfinishedExpand`).
    static let unfinishedExpandMark = "until it is run again)"

    /// Why each store in `stores` is busy: another session holds its `apply` lock, or an online
    /// step or a heavyweight chain of it is unfinished.
    func storesInProgress(_ stores: [String]) throws -> [String: String] {
        let wanted = Set(stores)
        var keys: [String: String] = [:]
        for store in stores {
            let bits = UInt64(bitPattern: StoreLock(store: store, connection: connection).key)
            keys["\(bits >> 32)/\(bits & 0xFFFF_FFFF)"] = store
        }
        var busy: [String: String] = [:]
        let locks = try connection.execute("""
            SELECT l.classid::text || '/' || l.objid::text AS key FROM pg_locks l
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.pid <> pg_backend_pid()
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """)
        for row in locks.rows.indices {
            if let store = locks.value(row, "key").flatMap({ keys[$0] }) { busy[store] = "being migrated (another session holds its lock)" }
        }
        let online = try connection.execute("SELECT to_regclass(\(MetadataSchema.schema + "." + OnlineCheckpoint.table)) IS NOT NULL AS present")
        if online.bool(0, "present") == true {
            let rows = try connection.execute("SELECT store, from_version, to_version FROM \(ident: MetadataSchema.schema, OnlineCheckpoint.table)")
            // An `apply --expand` that made the views of its old version serves it through them.
            let views = rows.rows.indices.compactMap { row -> String? in
                guard let store = rows.value(row, "store"), wanted.contains(store), let from = rows.value(row, "from_version") else { return nil }
                return OldVersionViews.schemaName(store: store, version: from)
            }
            let served = views.isEmpty ? [] : Set(try connection.execute("SELECT nspname FROM pg_namespace WHERE nspname IN (\(literals: views))").rows.compactMap { $0[0] })
            for row in rows.rows.indices {
                guard let store = rows.value(row, "store"), wanted.contains(store) else { continue }
                let from = rows.value(row, "from_version") ?? "", viewsSchema = OldVersionViews.schemaName(store: store, version: from)
                let expand = served.contains(viewsSchema) ? " (an apply --expand: '\(from)' served in \"\(viewsSchema)\" \(Self.unfinishedExpandMark)" : ""
                busy[store] = busy[store] ?? "an online step '\(from)' -> '\(rows.value(row, "to_version") ?? "")' is unfinished\(expand)"
            }
        }
        if try MetadataSchema.hasStoreSchemas(on: connection) {
            let rows = try connection.execute("""
                SELECT s.store FROM \(ident: MetadataSchema.schema, StoreSchemas.table) AS s JOIN pg_namespace AS n ON n.nspname = s.schema
                WHERE s.role = 'backup' AND NOT s.chain_finished
                """)
            for row in rows.rows.indices {
                guard let store = rows.value(row, "store"), wanted.contains(store) else { continue }
                busy[store] = busy[store] ?? "a chain of heavyweight steps is unfinished (`orchestrator apply` finishes it)"
            }
        }
        return busy
    }
}
