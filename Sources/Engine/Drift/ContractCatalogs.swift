import Foundation
import ObjectModel
import Planning
import PostgresClient

/// Contracts already built, by version. A version's contract is a function of its full
/// definition (two versions that share a model hash may differ in a default, so the whole
/// version is the key) and of the server that normalises it, so a migrator keeps one of these
/// for its connection: `apply` checks the drift before taking the store's lock and again under
/// it, and builds the contract (temporary tables, a rolled-back transaction) only once. The
/// store's own catalog is read at every check, so a change between two checks is always seen.
public final class ContractCatalogs: @unchecked Sendable {
    private let lock = NSLock()
    private var built: [ModelVersion: SchemaCatalog] = [:]
    private var builds = 0

    /// How many contracts were built (not found here).
    var buildCount: Int { lock.withLock { builds } }

    public init() {}

    /// `DriftCheck.contract(of:on:)`, built on the first call for `version`.
    func contract(of version: ModelVersion, on connection: PostgresConnection) throws -> SchemaCatalog {
        if let catalog = lock.withLock({ built[version] }) { return catalog }
        let catalog = try DriftCheck.contract(of: version, on: connection)
        lock.withLock {
            built[version] = catalog
            builds += 1
        }
        return catalog
    }
}
