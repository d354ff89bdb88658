import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// Contracts already built, kept for the whole process (`shared`): a contract is built once per
/// model version and reused by every check after it, on any connection whose server prints the
/// catalog the same way, so `apply` builds it once for its check before the store's lock and
/// the one under it, and `fleet` once for the many stores of one version.
///
/// A contract is a function of two things, which together are the key:
/// - the version's full definition: two versions that share a version hash may differ in a
///   default value, which the contract holds, so the hash alone cannot be the key;
/// - how the server prints types, defaults and CHECKs: its version and the session settings
///   that shape printed values (`printingSettings`), read again at each check.
/// Nothing else invalidates an entry. The store's own catalog is read at every check, so a
/// change made between two checks is always seen.
public final class ContractCatalogs: @unchecked Sendable {
    /// The process's cache: the default of every drift check.
    public static let shared = ContractCatalogs()

    private struct Key: Hashable {
        var printing: [String?]
        var version: ModelVersion
    }

    private let lock = NSLock()
    private var built: [Key: SchemaCatalog] = [:]
    private var builds = 0

    /// How many contracts were built (not found here).
    var buildCount: Int { lock.withLock { builds } }

    public init() {}

    /// The contract of `version` as `connection`'s server prints it; built on the first call
    /// for them (temporary tables in a transaction rolled back), then found here.
    public func contract(of version: ModelVersion, on connection: PostgresConnection) throws -> SchemaCatalog {
        try catalogs(of: version, with: [], on: connection).contract
    }

    /// `version`'s contract and the catalogs of `schemas`, in one transaction, under
    /// `lockTimeoutMilliseconds` when given. A contract not built yet is built in it, and read
    /// with `schemas` in one catalog read; the transaction is then rolled back.
    func catalogs(
        of version: ModelVersion, with schemas: [String], lockTimeoutMilliseconds: Int? = nil, on connection: PostgresConnection
    ) throws -> (contract: SchemaCatalog, schemas: [String: SchemaCatalog]) {
        do {
            return try connection.transaction {
                let settings = try connection.execute(Self.printingSettings(lockTimeoutMilliseconds: lockTimeoutMilliseconds))
                let key = Key(printing: Array((settings.rows.first ?? []).dropFirst()), version: version)
                if let contract = lock.withLock({ built[key] }) {
                    return (contract, schemas.isEmpty ? [:] : try CatalogReader.read(schemas: schemas, on: connection))
                }
                let temporary = try Self.createContractTables(of: version, on: connection)
                let read = try CatalogReader.read(schemas: schemas + [temporary].compactMap { $0 }, on: connection)
                let contract = temporary.flatMap { read[$0] } ?? SchemaCatalog()
                lock.withLock {
                    built[key] = contract
                    builds += 1
                }
                throw RolledBack(contract: contract, schemas: read.filter { schemas.contains($0.key) })
            }
        } catch let rolledBack as RolledBack {
            return (rolledBack.contract, rolledBack.schemas)
        }
    }

    /// What shapes the catalog's text besides the DDL: the server's version (its deparser) and
    /// the settings its output functions read (a timestamptz default prints in the session's
    /// time zone, a float's digits follow extra_float_digits, a string's quoting
    /// standard_conforming_strings). Its first column sets the transaction's lock timeout, when
    /// given, in the same round trip.
    static func printingSettings(lockTimeoutMilliseconds: Int?) -> SQL {
        let lockTimeout: SQL = lockTimeoutMilliseconds.map { "set_config('lock_timeout', \(String($0)), true)" } ?? "NULL"
        return """
            SELECT \(lockTimeout) AS lock_timeout, current_setting('server_version_num'), current_setting('server_encoding'),
                   current_setting('TimeZone'), current_setting('DateStyle'), current_setting('IntervalStyle'),
                   current_setting('extra_float_digits'), current_setting('bytea_output'),
                   current_setting('standard_conforming_strings'), current_setting('search_path')
            """
    }

    /// `CreateStore` for `version` as temporary tables (so a role that may only read the store,
    /// and create temporary tables as every role may by default, can check it), in the open
    /// transaction. Temporary tables hold the same types, defaults, constraints and indexes;
    /// only the schema differs, and no name in the catalog carries it. Returns the temporary
    /// schema, nil when the version has no table (and so made none).
    private static func createContractTables(of version: ModelVersion, on connection: PostgresConnection) throws -> String? {
        // The first statement creates the schema: pg_temp is there already.
        for statement in CreateStore.statements(for: StoreLayout(version: version, schema: "pg_temp")).dropFirst() {
            try connection.execute(statement.sql)
        }
        let schema = try connection.execute("SELECT nspname FROM pg_namespace WHERE oid = pg_my_temp_schema()")
        return schema.rows.first?.first ?? nil
    }

    /// Carries the catalogs out of the transaction that read them, which rolls back.
    private struct RolledBack: Error {
        var contract: SchemaCatalog
        var schemas: [String: SchemaCatalog]
    }
}
