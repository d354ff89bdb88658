import Foundation
import Planning
import PostgresClient

extension ServerSurvey {
    /// The stores whose catalogs a survey holds at once: one part for each reader session.
    public var storesHeldAtOnce: Int { max(1, readers) * storesPerReader }

    /// Gives the memory of a part's catalogs, freed, back to the system (glibc keeps freed
    /// pages otherwise, and the stores' survey results held between them fragment the heap).
    /// glibc's `malloc_trim`, looked up at run time (absent from other C libraries).
    static func releaseFreedMemory() {
        _ = trimHeap?(0)
    }

    private typealias Trim = @convention(c) (Int) -> Int32
    private static let trimHeap: Trim? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim").map { unsafeBitCast($0, to: Trim.self) }

    /// `items` in consecutive parts of at most `size`.
    static func parts<Item>(of items: [Item], size: Int) -> [ArraySlice<Item>] {
        stride(from: 0, to: items.count, by: max(1, size)).map { items[$0 ..< min($0 + max(1, size), items.count)] }
    }

    /// The catalogs of `stores`, in parts read at once on `readers` sessions (the first on
    /// `connection`) when there are enough stores and `connectReader` is given; each part as
    /// `readCatalogs` reads it, so the result is the same as one read's.
    func readCatalogsInParts(_ stores: [String]) throws -> [String: LiveCatalog] {
        let parts = min(readers, stores.count / max(1, storesPerReader))
        let fingerprints = readsFingerprints
        guard let connectReader, parts > 1 else { return try Self.readCatalogs(stores, fingerprints: fingerprints, on: connection) }
        let size = (stores.count + parts - 1) / parts
        let chunks = stride(from: 0, to: stores.count, by: size).map { Array(stores[$0 ..< min($0 + size, stores.count)]) }
        let results = ResultSlots<Result<[String: LiveCatalog], Error>>(count: chunks.count)
        let first = connection
        DispatchQueue.concurrentPerform(iterations: chunks.count) { index in
            results.set(index, Result {
                guard index > 0 else { return try Self.readCatalogs(chunks[index], fingerprints: fingerprints, on: first) }
                let reader = try connectReader()
                defer { reader.close() }
                return try Self.readCatalogs(chunks[index], fingerprints: fingerprints, on: reader)
            })
        }
        var catalogs: [String: LiveCatalog] = [:]
        for result in results.values {
            catalogs.merge(try result?.get() ?? [:]) { first, _ in first }
        }
        return catalogs
    }

    /// A store's catalog as the survey read it, and its fingerprint read just before (when asked).
    struct LiveCatalog {
        var catalog: SchemaCatalog
        var fingerprint: String?
    }

    /// The catalogs of `stores`, in one transaction with the drift check's lock timeout; when a
    /// table stays locked, each store alone, and one still locked is left out. With
    /// `fingerprints`, the fingerprints are read first in the same transaction: a change made
    /// after them and seen by the catalog's read makes them differ from the store's later on.
    static func readCatalogs(_ stores: [String], fingerprints: Bool, on connection: PostgresConnection) throws -> [String: LiveCatalog] {
        do {
            return try connection.transaction {
                try connection.execute(ExecutionPolicy.setLockTimeout(milliseconds: DriftCheck.lockTimeoutMilliseconds))
                let prints = fingerprints ? try CatalogFingerprint.read(schemas: stores, on: connection) : [:]
                let catalogs = try CatalogReader.read(schemas: stores, on: connection)
                return Dictionary(uniqueKeysWithValues: catalogs.map { ($0.key, LiveCatalog(catalog: $0.value, fingerprint: prints[$0.key])) })
            }
        } catch let error as PostgresError where error.sqlState == .lockNotAvailable && stores.count > 1 {
            var catalogs: [String: LiveCatalog] = [:]
            for store in stores {
                catalogs.merge(try readCatalogs([store], fingerprints: fingerprints, on: connection)) { first, _ in first }
            }
            return catalogs
        } catch let error as PostgresError where error.sqlState == .lockNotAvailable {
            return [:]
        }
    }
}
