import Foundation
import Testing
import PostgresClient
import SQLBuilding
@testable import Engine

/// The application during a corpus run applied online, for any model: on the tables of the
/// entities the run keeps, it copies a row (an insert with the same values), appends to a text
/// value, or deletes a row, each transaction written to the live store and identically to its
/// twin, which stays at the version the live store's running step starts from: it is migrated
/// offline after each step, the writer paused from the step's switch-over until then (`pause`,
/// `resume`). A write either store refuses (a constraint, a name the store no longer has) rolls
/// back in both.
final class CorpusWriter: @unchecked Sendable {
    /// A table of the first version, with the entities of its rows the run keeps.
    struct Target: Sendable {
        var table: String
        var entities: [String]
    }

    let url: String
    let live: String
    let twin: String
    let targets: [Target]
    private let lock = NSLock()
    private var stopped = false
    private(set) var committed = 0
    /// Refused transactions by SQLSTATE: what an application may meet (constraints, deadlocks,
    /// a table or column renamed between reading the catalog and writing).
    private(set) var refused: [String: Int] = [:]
    /// Failures no application write should meet.
    private(set) var unexpected: [String] = []
    private let done = DispatchSemaphore(value: 0)
    /// Held through each write transaction; `pause` takes it between two.
    private let writing = NSLock()
    private var pauseRequested = false
    /// Whether `pause` holds `writing` (touched only by the thread that runs the migration).
    private var isPaused = false
    private var generator = SystemRandomNumberGenerator()
    static let expectedStates: Set<String> = ["40P01", "40001", "42703", "42P01", "55P03"]

    init(url: String, live: String, twin: String, targets: [Target]) {
        self.url = url
        self.live = live
        self.twin = twin
        self.targets = targets
    }

    var commits: Int { lock.withLock { committed } }
    private var attempts: Int { lock.withLock { committed + refused.values.reduce(0, +) + unexpected.count } }
    private var isStopped: Bool { lock.withLock { stopped } }

    func start() {
        Thread { [self] in
            defer { done.signal() }
            guard !targets.isEmpty, let connection = try? PostgresConnection(url: url) else {
                lock.withLock { unexpected.append("the writer could not connect or has no table") }
                return
            }
            defer { connection.close() }
            while !isStopped {
                if lock.withLock({ pauseRequested }) {
                    Thread.sleep(forTimeInterval: 0.005)
                    continue
                }
                writing.lock()
                defer { writing.unlock() }
                do {
                    var wrote = false
                    try connection.transaction { wrote = try writeOnce(on: connection) }
                    if wrote { lock.withLock { committed += 1 } }
                } catch let error as PostgresError where error.sqlState.map({ $0.code.hasPrefix("23") || Self.expectedStates.contains($0.code) }) == true {
                    lock.withLock { refused[error.sqlState!.code, default: 0] += 1 }
                } catch {
                    lock.withLock { unexpected.append(String(describing: error)) }
                }
            }
        }.start()
    }

    /// Runs `body` between two of the writer's transactions, none running meanwhile.
    /// Waits for the writer's transaction to end and keeps it from starting another until
    /// `resume`, which the same thread calls. Nothing when already paused.
    func pause() {
        guard !isPaused else { return }
        lock.withLock { pauseRequested = true }
        writing.lock()
        isPaused = true
    }

    func resume() {
        guard isPaused else { return }
        isPaused = false
        writing.unlock()
        lock.withLock { pauseRequested = false }
    }

    /// Stops the writer and waits for its last transaction.
    func stop() {
        lock.withLock { stopped = true }
        resume()
        done.wait()
    }

    /// For `apply`'s progress: before each online phase, wait (at most 5 s) for one more write
    /// attempt, so writes interleave with every phase however the threads are scheduled.
    func interleave(_ event: ProgressEvent) {
        guard event.kind == .passStarted, event.stage == .online else { return }
        let target = attempts + 1, deadline = Date().addingTimeInterval(5)
        while attempts < target && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    }

    private func random(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }

    /// Column names and types of `schema.table`.
    private func columns(_ schema: String, _ table: String, on connection: PostgresConnection) throws -> [String: String] {
        let result = try connection.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = \(schema) AND table_name = \(table)")
        return Dictionary(result.rows.compactMap { row in row[0].map { ($0, row[1] ?? "") } }, uniquingKeysWith: { first, _ in first })
    }

    /// One write, the same in both stores; false when there was nothing to write.
    private func writeOnce(on connection: PostgresConnection) throws -> Bool {
        let target = targets[random(0...(targets.count - 1))]
        let twinColumns = try columns(twin, target.table, on: connection)
        let liveColumns = try columns(live, target.table, on: connection)
        guard !liveColumns.isEmpty else { return false }
        // Keys over the whole table: rows the batches passed and rows they have not reached.
        guard let key = try connection.execute("""
            SELECT _pk FROM \(ident: twin, target.table) WHERE _entity IN (\(literals: target.entities)) ORDER BY random() LIMIT 1
            """).rows.first?.first.flatMap({ $0 }).flatMap({ Int64($0) }) else { return false }
        let shared = twinColumns.keys.filter { $0 != "_pk" && liveColumns[$0] != nil }.sorted()
        switch random(0...5) {
        case 0, 1:
            let copied = try connection.execute("""
                INSERT INTO \(ident: live, target.table) (\(idents: shared)) SELECT \(idents: shared) FROM \(ident: live, target.table)
                WHERE _pk = \(key) RETURNING _pk
                """)
            guard let newKey = copied.rows.first?.first.flatMap({ $0 }).flatMap({ Int64($0) }) else { return false }
            try connection.execute("""
                INSERT INTO \(ident: twin, target.table) (_pk, \(idents: shared)) OVERRIDING SYSTEM VALUE
                SELECT \(newKey)::bigint, \(idents: shared) FROM \(ident: twin, target.table) WHERE _pk = \(key)
                """)
        case 2, 3, 4:
            let texts = shared.filter { twinColumns[$0] == "text" && liveColumns[$0] == "text" && !$0.hasPrefix("_") }
            guard !texts.isEmpty else { return false }
            let column = texts[random(0...(texts.count - 1))]
            for store in [live, twin] {
                try connection.execute("UPDATE \(ident: store, target.table) SET \(ident: column) = \(ident: column) || '+' WHERE _pk = \(key)")
            }
        default:
            for store in [live, twin] {
                try connection.execute("DELETE FROM \(ident: store, target.table) WHERE _pk = \(key)")
            }
        }
        return true
    }
}
