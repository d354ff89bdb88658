import Foundation
import PostgresClient
import SQLBuilding

/// The application while a store is migrated online: a thread of transactions on the live store,
/// each `write` made identically to its twin (another schema of the same database, holding the
/// same rows under the same keys and left at the version the live store starts from). Migrating
/// the twin offline afterwards gives what the live store must hold (`TwinComparison`).
///
/// `Rules` say which failed writes an application meets and tries again, and whether writes
/// stop at the switch-over. Any other failure is kept in `failure` (with whether the live store
/// had switched over by then) and stops the writer, unless the rules say to go on.
public final class TwinWriter: @unchecked Sendable {
    /// One transaction's writes, on both stores; `NothingWritten` rolls it back uncounted.
    public typealias Write = (_ writer: TwinWriter, _ connection: PostgresConnection) throws -> Void

    /// Thrown by a write that found nothing to write.
    public struct NothingWritten: Error {
        public init() {}
    }

    public struct Rules: Sendable {
        /// SQLSTATEs of failed writes the application tries again (a class: its two first
        /// characters), counted in `refused`.
        public var retried: Set<String>
        /// Once the live store is at `targetVersion`, the transaction rolls back and the writer
        /// stops: for writes that mean nothing after the switch-over.
        public var stopsAtSwitchOver: Bool
        /// Whether another failure stops the writer; otherwise it is kept and the writer goes on.
        public var stopsAtFailure: Bool

        /// Random writes on a store whose names the migration keeps: a deadlock with one of its
        /// short locks is tried again.
        public static let concurrent = Rules(retried: ["40P01"], stopsAtSwitchOver: false, stopsAtFailure: true)
        /// Writes of the first version only: a deadlock, or a table or column the migration
        /// renamed meanwhile, is tried again, and the writer stops at the switch-over.
        public static let guarded = Rules(retried: ["40P01", "42P01", "42703"], stopsAtSwitchOver: true, stopsAtFailure: true)
        /// An old release during `apply --expand`: it reads its version through the views once
        /// they are there (`search_path`), so a statement that met the tables as the switch-over
        /// renamed them is tried again, and it goes on after the switch-over.
        public static let rolling = Rules(retried: ["40P01", "42P01", "42703"], stopsAtSwitchOver: false, stopsAtFailure: true)
        /// An old release that must never meet a renamed name during `apply --expand` (its views
        /// made before the renames): only a deadlock is tried again.
        public static let throughViews = Rules(retried: ["40P01"], stopsAtSwitchOver: false, stopsAtFailure: true)
        /// Writes on any model: whatever an application may meet (a constraint, a deadlock, a
        /// serialization failure, a renamed table or column, a lock timeout) is refused and the
        /// writer goes on.
        public static let corpus = Rules(retried: ["23", "40P01", "40001", "42703", "42P01", "55P03"], stopsAtSwitchOver: false, stopsAtFailure: false)

        func retries(_ code: String) -> Bool {
            retried.contains(code) || retried.contains(String(code.prefix(2)))
        }
    }

    /// A failed write that no rule expected.
    public struct Failure: CustomStringConvertible {
        public var error: Error
        /// Whether the live store was at the target version by then.
        public var afterSwitchOver: Bool
        public var description: String { "\(error)\(afterSwitchOver ? " (after the switch-over)" : "")" }
    }

    /// Opens the writer's session (a URL's, or another session's server and user).
    private let connect: @Sendable () throws -> PostgresConnection
    /// The live store's schema.
    public let live: String
    /// The twin's schema.
    public let twin: String
    /// The version the migration brings the live store to.
    public let targetVersion: String
    public let rules: Rules
    /// Slept between two transactions (outside them): a steady application rather than a flood.
    public var pauseBetween: TimeInterval = 0
    /// Each write runs outside a transaction block, its statements committing one by one.
    public var autocommits = false
    private let write: Write
    private let lock = NSLock()
    private var stopped = false
    private var committed = 0
    private var refusedByState: [String: Int] = [:]
    private var failures: [Failure] = []
    private let done = DispatchSemaphore(value: 0)
    /// Held through each transaction; `pause` takes it between two.
    private let writing = NSLock()
    private var pauseRequested = false
    /// Whether `pause` holds `writing` (touched only by the thread that pauses).
    private var isPaused = false
    private var generator = SystemRandomNumberGenerator()

    private struct SwitchedOver: Error {}

    /// Thrown by a write when the writer has nothing more to do: it ends, as `stop` ends it.
    public struct Finished: Error {
        public init() {}
    }

    public convenience init(url: String, live: String, twin: String, targetVersion: String = "v2", rules: Rules, write: @escaping Write) {
        self.init(connect: { try PostgresConnection(url: url) }, live: live, twin: twin, targetVersion: targetVersion, rules: rules, write: write)
    }

    /// On sessions to `connection`'s server as its user (`reconnect`), the writer's opened now.
    public convenience init(sessionsLike connection: PostgresConnection, live: String, twin: String, targetVersion: String = "v2", rules: Rules, write: @escaping Write) throws {
        let opener = Opener(connection, first: try connection.reconnect())
        self.init(connect: { try opener.open() }, live: live, twin: twin, targetVersion: targetVersion, rules: rules, write: write)
    }

    private init(connect: @escaping @Sendable () throws -> PostgresConnection, live: String, twin: String, targetVersion: String, rules: Rules, write: @escaping Write) {
        self.connect = connect
        self.live = live
        self.twin = twin
        self.targetVersion = targetVersion
        self.rules = rules
        self.write = write
    }

    /// A new session like the writer's (a blocker, a look at the stores).
    public func newSession() throws -> PostgresConnection {
        try connect()
    }

    public var commits: Int { lock.withLock { committed } }
    /// Refused transactions by SQLSTATE (those the rules retry).
    public var refused: [String: Int] { lock.withLock { refusedByState } }
    /// The first failure no rule expected.
    public var failure: Failure? { lock.withLock { failures.first } }
    /// Every failure no rule expected.
    public var unexpected: [Failure] { lock.withLock { failures } }
    public var hasFailed: Bool { failure != nil }
    /// Transactions tried: committed, refused or failed.
    public var attempts: Int { lock.withLock { committed + refusedByState.values.reduce(0, +) + failures.count } }
    private var isStopped: Bool { lock.withLock { stopped } }

    /// Starts the writer on a thread of its own: a block on Dispatch's global queue shares a pool
    /// sized to the cores, which other tests' writers may hold, and starts only once Dispatch
    /// notices they block.
    public func start() {
        Thread { [self] in
            defer { done.signal() }
            let connection: PostgresConnection
            do {
                connection = try connect()
            } catch {
                lock.withLock { failures.append(Failure(error: error, afterSwitchOver: false)) }
                return
            }
            defer { connection.close() }
            while !isStopped {
                if lock.withLock({ pauseRequested }) {
                    Thread.sleep(forTimeInterval: 0.005)
                    continue
                }
                guard writeOnce(on: connection) else { return }
                if pauseBetween > 0 { Thread.sleep(forTimeInterval: pauseBetween) }
            }
        }.start()
    }

    /// One transaction; false when the writer stops.
    private func writeOnce(on connection: PostgresConnection) -> Bool {
        writing.lock()
        defer { writing.unlock() }
        do {
            if autocommits {
                try write(self, connection)
            } else {
                try connection.transaction {
                    try write(self, connection)
                    if rules.stopsAtSwitchOver, try version(on: connection) == targetVersion { throw SwitchedOver() }
                }
            }
            lock.withLock { committed += 1 }
        } catch is NothingWritten {
        } catch is SwitchedOver {
            return false
        } catch is Finished {
            return false
        } catch let error as PostgresError where error.sqlState.map({ rules.retries($0.code) }) == true {
            lock.withLock { refusedByState[error.sqlState!.code, default: 0] += 1 }
        } catch {
            let switched = isSwitchedOver(connection)
            if rules.stopsAtSwitchOver && switched { return false }
            lock.withLock { failures.append(Failure(error: error, afterSwitchOver: switched)) }
            return !rules.stopsAtFailure
        }
        return true
    }

    /// Runs nothing of the writer's until `resume`: waits for its transaction to end and keeps
    /// it from starting another. Nothing when already paused; the same thread resumes.
    public func pause() {
        guard !isPaused else { return }
        lock.withLock { pauseRequested = true }
        writing.lock()
        isPaused = true
    }

    public func resume() {
        guard isPaused else { return }
        isPaused = false
        writing.unlock()
        lock.withLock { pauseRequested = false }
    }

    /// Stops the writer and waits for its last transaction.
    public func stop() {
        requestStop()
        done.wait()
        done.signal()
    }

    /// Stops the writer after its current transaction, without waiting for it.
    public func requestStop() {
        lock.withLock { stopped = true }
        resume()
    }

    /// Waits (at most `seconds`) for the writer to end by itself (`Finished`, a failure) or
    /// by `stop`; true when it has. Asked again, it answers again.
    public func waitUntilDone(within seconds: Double = 120) -> Bool {
        guard done.wait(timeout: .now() + seconds) == .success else { return false }
        done.signal()
        return true
    }

    /// Waits (at most 30 s) until the writer has committed `count` transactions: on a loaded
    /// machine its thread may start late.
    public func waitForCommits(_ count: Int) {
        let deadline = Date().addingTimeInterval(30)
        while commits < count && !hasFailed && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    }

    /// Waits (at most 5 s) for one more transaction tried, committed or not.
    public func waitForAttempt() {
        let target = attempts + 1, deadline = Date().addingTimeInterval(5)
        while attempts < target && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    }

    public func random(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }

    /// The version the metadata names for the live store.
    private func version(on connection: PostgresConnection) throws -> String? {
        try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = \(live)").rows.first?.first ?? nil
    }

    /// Whether the live store is at the target version, read on `connection` or, when it fails,
    /// on a new session.
    private func isSwitchedOver(_ connection: PostgresConnection) -> Bool {
        if let read = try? version(on: connection) { return read == targetVersion }
        guard let session = try? newSession() else { return false }
        defer { session.close() }
        return (try? version(on: session)) == targetVersion
    }

    /// The same statement in both stores (`sql` is given the store's schema).
    public func both(_ sql: (String) -> SQL, on connection: PostgresConnection) throws {
        for store in [live, twin] { try connection.execute(sql(store)) }
    }

    /// The row of `table` whose `_pk` is `key` deleted in both stores (if it is there).
    public func delete(from table: String, key: Int, on connection: PostgresConnection) throws {
        try both({ "DELETE FROM \(ident: $0, table) WHERE _pk = \(literal: Int64(key))" }, on: connection)
    }

    /// A row inserted into the live store and, with the `_pk` it took, into the twin; `values`
    /// are given the store's schema. A row the live store skipped is skipped in both.
    /// `liveTable` names the table in the live store, when the step renamed it already.
    public func insert(into table: String, liveTable: String? = nil, columns: [String], values: (String) -> SQL, on connection: PostgresConnection) throws {
        let key = try connection.execute("INSERT INTO \(ident: live, liveTable ?? table) (\(idents: columns)) VALUES (\(values(live))) RETURNING _pk")
        guard let pk = key.rows.first?.first.flatMap({ $0 }).flatMap({ Int64($0) }) else { return }
        try connection.execute("INSERT INTO \(ident: twin, table) (\(idents: ["_pk"] + columns)) OVERRIDING SYSTEM VALUE VALUES (\(literal: pk), \(values(twin)))")
    }
}

/// The writer's session, opened beside `connection`; later ones like it.
private final class Opener: @unchecked Sendable {
    private let connection: PostgresConnection
    private let lock = NSLock()
    private var first: PostgresConnection?

    init(_ connection: PostgresConnection, first: PostgresConnection) {
        self.connection = connection
        self.first = first
    }

    func open() throws -> PostgresConnection {
        if let session = lock.withLock({ () -> PostgresConnection? in
            defer { first = nil }
            return first
        }) { return session }
        return try connection.reconnect()
    }
}
