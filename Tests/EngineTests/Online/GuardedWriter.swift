import Foundation
import ObjectModel
import PostgresClient
import SQLBuilding
@testable import Engine

/// The application during `apply --online`, for steps whose first-version writes have no
/// meaning once the step switched over (rows of an entity that moves to another table are
/// written to its old table). Each transaction runs `write`, which writes the live store and,
/// identically, a shadow copy that stays at the first version; then it reads the live store's
/// version, and once the switch-over has committed it rolls back and the writer stops. A
/// deadlock with one of the migration's short locks is retried, as an application would.
final class GuardedWriter: OnlineWriter, @unchecked Sendable {
    /// One transaction's writes; `random` draws keys and values.
    typealias Write = (_ writer: GuardedWriter, _ connection: PostgresConnection) throws -> Void

    let url: String
    let live: String
    let shadow: String
    let targetVersion: String
    private let write: Write
    private let lock = NSLock()
    private var stopped = false
    private var committed = 0
    private var failed: Error?
    private let done = DispatchSemaphore(value: 0)
    private var generator = SystemRandomNumberGenerator()

    private struct SwitchedOver: Error {}

    init(url: String, live: String, shadow: String, targetVersion: String = "v2", write: @escaping Write) {
        self.url = url
        self.live = live
        self.shadow = shadow
        self.targetVersion = targetVersion
        self.write = write
    }

    var commits: Int { lock.withLock { committed } }
    /// A transaction that failed before the switch-over.
    var failure: Error? { lock.withLock { failed } }
    var hasFailed: Bool { failure != nil }
    private var isStopped: Bool { lock.withLock { stopped } }

    func start() {
        // A thread of its own, as ConcurrentWriter's: a block on Dispatch's global queue shares
        // a pool sized to the cores, which the other tests' writers may hold, and starts only
        // once Dispatch notices they block.
        Thread { [self] in
            defer { done.signal() }
            do {
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                while !isStopped {
                    do {
                        try connection.transaction {
                            try write(self, connection)
                            if try version(on: connection) == targetVersion { throw SwitchedOver() }
                        }
                        lock.withLock { committed += 1 }
                    } catch let error as PostgresError where [.deadlockDetected, .undefinedTable, .undefinedColumn].contains(error.sqlState) {
                        // A deadlock with a short lock of the migration, or a table or column
                        // it renamed meanwhile: the application tries again.
                        continue
                    }
                }
            } catch is SwitchedOver {
                return
            } catch {
                if let connection = try? PostgresConnection(url: url) {
                    defer { connection.close() }
                    if (try? version(on: connection)) == targetVersion { return }
                }
                lock.withLock { failed = error }
            }
        }.start()
    }

    /// Stops the writer and waits for its last transaction.
    func stop() {
        lock.withLock { stopped = true }
        done.wait()
    }

    func random(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }

    private func version(on connection: PostgresConnection) throws -> String? {
        try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = \(live)").rows.first?.first ?? nil
    }

    /// The same statement in both stores (`sql` is given the store's schema).
    func both(_ sql: (String) -> SQL, on connection: PostgresConnection) throws {
        for store in [live, shadow] { try connection.execute(sql(store)) }
    }

    /// The row of `table` whose `_pk` is `key` deleted in both stores (if it is there).
    func delete(from table: String, key: Int, on connection: PostgresConnection) throws {
        try both({ "DELETE FROM \(ident: $0, table) WHERE _pk = \(literal: Int64(key))" }, on: connection)
    }

    /// A row inserted into the live store and, with the `_pk` it took, into the shadow store;
    /// `values` are given the store's schema. A row the live store skipped is skipped in both.
    /// `liveTable` names the table in the live store, when the step renamed it already.
    func insert(into table: String, liveTable: String? = nil, columns: [String], values: (String) -> SQL, on connection: PostgresConnection) throws {
        let key = try connection.execute("INSERT INTO \(ident: live, liveTable ?? table) (\(idents: columns)) VALUES (\(values(live))) RETURNING _pk")
        guard let pk = key.rows.first?.first.flatMap({ $0 }).flatMap({ Int64($0) }) else { return }
        try connection.execute("INSERT INTO \(ident: shadow, table) (\(idents: ["_pk"] + columns)) OVERRIDING SYSTEM VALUE VALUES (\(literal: pk), \(values(shadow)))")
    }

    /// The store and its shadow copy (`ShadowedStore`), and a writer (not started) writing both.
    static func withShadowedStore(
        _ model: VersionedModel, store: String, shadow: String, write: @escaping Write,
        _ body: (PostgresConnection, GuardedWriter, _ url: String) throws -> Void
    ) throws {
        try ShadowedStore.with(model, store: store, shadow: shadow) { connection, url in
            try body(connection, GuardedWriter(url: url, live: store, shadow: shadow, write: write), url)
        }
    }
}
