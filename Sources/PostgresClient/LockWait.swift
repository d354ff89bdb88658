import Foundation

/// A session holding a lock that another session waits for, as `pg_stat_activity` shows it.
public struct LockHolder: Sendable, Equatable, CustomStringConvertible {
    public var pid: Int
    public var applicationName: String
    public var user: String?
    /// `active`, `idle in transaction`…
    public var state: String?
    /// The holder's current (or last) statement, on one line and shortened.
    public var query: String?

    public init(pid: Int, applicationName: String, user: String? = nil, state: String? = nil, query: String? = nil) {
        self.pid = pid
        self.applicationName = applicationName
        self.user = user
        self.state = state
        self.query = query
    }

    public var description: String {
        var details = ["application_name '\(applicationName)'"]
        if let user { details.append("user \(user)") }
        if let state { details.append(state) }
        if let query, !query.isEmpty { details.append("query: \(query)") }
        return "pid \(pid) (\(details.joined(separator: ", ")))"
    }
}

/// A statement waiting for a lock: on what, and who holds it (`pg_blocking_pids`).
public struct LockWait: Sendable, Equatable, CustomStringConvertible {
    /// What is locked: a relation's qualified name, `a row`, `an advisory lock`…
    public var lock: String
    public var holders: [LockHolder]

    public init(lock: String, holders: [LockHolder]) {
        self.lock = lock
        self.holders = holders
    }

    /// `orchestrator.stores is locked by pid 4242 (application_name 'psql', …)`.
    public var description: String {
        "\(lock) is locked by \(holders.map(\.description).joined(separator: "; "))"
    }
}

/// How long any statement of a session waits for a lock (`lock_timeout`, set for the session),
/// and who is told, while it waits, which session holds the lock.
public struct LockWaitBound: Sendable {
    /// The session's `lock_timeout`; transactions may set a shorter one (`SET LOCAL`).
    public var milliseconds: Int
    /// Called from another thread while a statement waits longer than `lookAfter` (and again
    /// when the holders change), with the lock and its holders.
    public var onWait: @Sendable (LockWait) -> Void

    public init(milliseconds: Int, onWait: @escaping @Sendable (LockWait) -> Void) {
        precondition(milliseconds > 0, "a lock wait bound of \(milliseconds) ms: lock_timeout 0 would wait without bound")
        self.milliseconds = milliseconds
        self.onWait = onWait
    }

    /// When a waiting statement is first looked at: after a second, or half the bound when
    /// that is shorter (the holders must be known before the wait runs out).
    var lookAfter: TimeInterval { min(1, Double(milliseconds) / 2000) }
}

/// Looks, from a second session of its own, at statements of a session that run longer than
/// `lookAfter`: when one waits for a lock, tells `bound.onWait` who holds it (once per holder
/// set within `repeatAfter`), and keeps the last wait seen for the error of a lock timeout.
final class LockWatcher: @unchecked Sendable {
    let bound: LockWaitBound
    /// Guards the settings and what was reported; never held while the monitor runs a query.
    private let lock = NSLock()
    /// Guards the monitoring session.
    private let monitorLock = NSLock()
    private var monitor: PostgresConnection?
    private let monitorFactory: () throws -> PostgresConnection
    private var lastReported: (wait: LockWait, at: Date)?
    private var storedLookAfter: TimeInterval
    private var isClosed = false
    static let pollInterval: TimeInterval = 0.5
    static let repeatAfter: TimeInterval = 30
    /// No statement is looked at sooner: most statements end before, and a look opens a session.
    static let earliestLook: TimeInterval = 0.05

    var lookAfter: TimeInterval {
        get { lock.withLock { storedLookAfter } }
        set { lock.withLock { storedLookAfter = newValue } }
    }

    init(bound: LockWaitBound, session: PostgresConnection) {
        self.bound = bound
        storedLookAfter = bound.lookAfter
        monitorFactory = { [connectionString = session.connectionString, defaults = session.defaults] in
            try PostgresConnection(connectionString, defaults: defaults)
        }
    }

    /// Starts looking at the statement the session `pid` is about to run.
    func watch(pid: Int32) -> StatementWatch {
        let watch = StatementWatch()
        DispatchQueue.global().asyncAfter(deadline: .now() + max(Self.earliestLook, lookAfter)) { [self] in
            while !watch.isFinished {
                if let wait = look(at: pid) {
                    watch.seen(wait)
                    report(wait, unless: watch)
                }
                Thread.sleep(forTimeInterval: Self.pollInterval)
            }
        }
        return watch
    }

    func close() {
        monitorLock.withLock {
            isClosed = true
            monitor?.close()
            monitor = nil
        }
    }

    private func report(_ wait: LockWait, unless watch: StatementWatch) {
        let isNew = lock.withLock {
            if let last = lastReported, last.wait == wait, Date().timeIntervalSince(last.at) < Self.repeatAfter { return false }
            lastReported = (wait, Date())
            return true
        }
        if isNew && !watch.isFinished { bound.onWait(wait) }
    }

    /// What `pid` waits for and who holds it; nil when it waits for no lock (or cannot be seen).
    private func look(at pid: Int32) -> LockWait? {
        monitorLock.withLock {
            guard !isClosed else { return nil }
            do {
                if monitor == nil { monitor = try monitorFactory() }
                let result = try monitor!.execute("""
                    SELECT (SELECT CASE WHEN l.locktype = 'relation' THEN l.relation::regclass::text
                                        WHEN l.locktype IN ('tuple', 'transactionid') THEN 'a row' || coalesce(' of ' || l.relation::regclass::text, '')
                                        WHEN l.locktype = 'advisory' THEN 'an advisory lock' ELSE 'a ' || l.locktype || ' lock' END
                            FROM pg_locks l WHERE l.pid = w.pid AND NOT l.granted LIMIT 1) AS lock,
                           h.pid, coalesce(h.application_name, '') AS application_name, h.usename AS user_name, h.state,
                           left(regexp_replace(h.query, '\\s+', ' ', 'g'), 200) AS query
                    FROM pg_stat_activity w, unnest(pg_blocking_pids(w.pid)) AS b(pid) JOIN pg_stat_activity h ON h.pid = b.pid
                    WHERE w.pid = \(Int(pid)) AND w.wait_event_type = 'Lock'
                    ORDER BY h.pid
                    """)
                guard !result.isEmpty else { return nil }
                let holders = result.rows.indices.map { row in
                    LockHolder(
                        pid: Int(result.int(row, "pid") ?? 0), applicationName: result.value(row, "application_name") ?? "",
                        user: result.value(row, "user_name"), state: result.value(row, "state"), query: result.value(row, "query")
                    )
                }
                return LockWait(lock: result.value(0, "lock") ?? "a lock", holders: holders)
            } catch {
                monitor?.close()
                monitor = nil
                return nil
            }
        }
    }
}

/// One statement being watched: finished once it returns; the last lock wait seen.
final class StatementWatch: @unchecked Sendable {
    private let lock = NSLock()
    private var finished = false
    private var lastSeen: LockWait?

    var isFinished: Bool { lock.withLock { finished } }
    var lastWait: LockWait? { lock.withLock { lastSeen } }

    func seen(_ wait: LockWait) { lock.withLock { lastSeen = wait } }
    func finish() { lock.withLock { finished = true } }
}
