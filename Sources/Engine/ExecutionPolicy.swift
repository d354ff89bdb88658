import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// How every migration transaction runs beside production traffic (docs/cli.md, "Locks and
/// waits"); the one place that sets its timeouts and retries it.
///
/// - `lock_timeout`: a statement waiting for a lock gives up after this long. Readers and writers
///   that arrive after a queued DDL lock request wait behind it, so this bounds their wait too.
/// - `idle_in_transaction_session_timeout`: when the process stops between two statements (SIGSTOP,
///   a frozen container), PostgreSQL ends the session and releases its locks; the write guard,
///   idle by design, is kept alive by statements of its own (`WriteGuard`).
/// - A transaction that failed for a lock (55P03) or a deadlock (40P01) rolled back entirely, so
///   it runs again after a backoff with jitter, up to `retries.attempts` times in all.
public struct ExecutionPolicy: Sendable {
    public var lockTimeoutMilliseconds: Int
    public var idleInTransactionTimeoutMilliseconds: Int
    public var retries: RetrySchedule
    /// Where attempts that gave up for a lock or a deadlock are counted, when anywhere.
    public var lockWaits: LockWaitLog?
    /// How the policy waits between attempts; tests replace it.
    var sleep: @Sendable (TimeInterval) -> Void = { Thread.sleep(forTimeInterval: $0) }

    public init(lockTimeoutMilliseconds: Int, idleInTransactionTimeoutMilliseconds: Int, retries: RetrySchedule, lockWaits: LockWaitLog? = nil) {
        self.lockWaits = lockWaits
        self.lockTimeoutMilliseconds = lockTimeoutMilliseconds
        self.idleInTransactionTimeoutMilliseconds = idleInTransactionTimeoutMilliseconds
        self.retries = retries
    }

    /// Runs `body` in a transaction under the policy's timeouts, again after a lock failure or a
    /// deadlock. `body` must be safe to run again: each attempt starts from a rolled-back state.
    /// A statement waiting for a lock is looked at (who holds it) before `lock_timeout` ends it.
    public func transaction<T>(on connection: PostgresConnection, _ body: () throws -> T) throws -> T {
        try retrying {
            try connection.lookingAtLockWaits(after: Double(lockTimeoutMilliseconds) * 0.6 / 1000) {
                try connection.transaction {
                    try setTimeouts(on: connection)
                    return try body()
                }
            }
        }
    }

    /// `transaction(on:_:)` in two round trips (`StatementPipeline`): BEGIN, the policy's
    /// timeouts and `statements`; then the statements `finishing` makes of their results, and
    /// COMMIT. Any failure rolls the whole transaction back and is thrown as the failing
    /// statement's `PostgresError` (which names it); lock failures and deadlocks run it again,
    /// as `transaction(on:_:)` does. Not inside a rehearsal, whose transactions are savepoints.
    public func pipelinedTransaction(
        on connection: PostgresConnection, _ statements: [SQL], finishing: ([QueryResult]) throws -> [SQL]
    ) throws -> [QueryResult] {
        precondition(!connection.isRehearsing, "pipelinedTransaction(on:) inside a rehearsal on \(connection)")
        return try retrying {
            try connection.lookingAtLockWaits(after: Double(lockTimeoutMilliseconds) * 0.6 / 1000) {
                let opening: [SQL] = ["BEGIN", Self.setLockTimeout(milliseconds: lockTimeoutMilliseconds), Self.setIdleTimeout(milliseconds: idleInTransactionTimeoutMilliseconds)]
                do {
                    let results = Array(try StatementPipeline.execute(opening + statements, on: connection).dropFirst(opening.count))
                    let commit = try StatementPipeline.execute(try finishing(results) + ["COMMIT"], on: connection)
                    guard commit.last?.commandTag != "ROLLBACK" else {
                        throw PostgresError(kind: .query, message: "the transaction was rolled back because a statement in it failed", statement: "COMMIT")
                    }
                    return results
                } catch {
                    _ = try? connection.execute("ROLLBACK")
                    throw error
                }
            }
        }
    }

    /// Begins a transaction under `lock_timeout` and `idle_in_transaction_session_timeout` and
    /// runs `body` in it, leaving it open for the caller to end (by closing the session): a
    /// guard that holds its locks while other sessions work, kept alive by a statement sent
    /// more often than the idle timeout (`WriteGuard`).
    public func openTransaction(on session: PostgresConnection, _ body: () throws -> Void) throws {
        try retrying {
            try session.execute("BEGIN")
            do {
                try setTimeouts(on: session)
                try body()
            } catch {
                _ = try? session.execute("ROLLBACK")
                throw error
            }
        }
    }

    /// `SET LOCAL lock_timeout`: the one spelling, also written into `plan --format sql` scripts.
    static func setLockTimeout(milliseconds: Int) -> SQL {
        "SET LOCAL lock_timeout = \(literal: milliseconds)"
    }

    /// The timeouts, and the mark of orchestrator's own transactions that the staging tables'
    /// write log leaves out (`StagingWriteLog`), in one round trip.
    private func setTimeouts(on connection: PostgresConnection) throws {
        try connection.execute("""
            SELECT set_config('lock_timeout', \(String(lockTimeoutMilliseconds)), true), \
            set_config('idle_in_transaction_session_timeout', \(String(idleInTransactionTimeoutMilliseconds)), true), \
            set_config(\(StagingWriteLog.runnerSetting), \(StagingWriteLog.runnerMark), true)
            """)
    }

    /// `SET LOCAL idle_in_transaction_session_timeout`.
    static func setIdleTimeout(milliseconds: Int) -> SQL {
        "SET LOCAL idle_in_transaction_session_timeout = \(literal: milliseconds)"
    }

    /// The last attempt's lock timeout names the lock's holder as an earlier attempt saw it,
    /// when it ran out before anyone looked.
    func retrying<T>(_ body: () throws -> T) throws -> T {
        var attempt = 1
        var seen: LockWait?
        while true {
            let started = Date()
            do {
                return try body()
            } catch where Self.isRetryable(error) && attempt < retries.attempts {
                seen = Self.lockTimeout(in: error)?.lockWait ?? seen
                sleep(retries.delay(after: attempt, jitter: Double.random(in: 0...1)))
                lockWaits?.record(seconds: Date().timeIntervalSince(started))
                attempt += 1
            } catch {
                guard let seen, var timeout = Self.lockTimeout(in: error), timeout.lockWait == nil else { throw error }
                timeout.lockWait = seen
                guard var failure = error as? PassFailure else { throw timeout }
                failure.underlying = timeout
                throw failure
            }
        }
    }

    /// The lock timeout (55P03) `error` is or wraps.
    static func lockTimeout(in error: Error) -> PostgresError? {
        let failure = ((error as? PassFailure)?.underlying ?? error) as? PostgresError
        return failure?.sqlState == .lockNotAvailable ? failure : nil
    }

    /// Lock-not-available and deadlock: another session was in the way, not our SQL.
    static func isRetryable(_ error: Error) -> Bool {
        let failure = (error as? PassFailure)?.underlying ?? error
        let state = (failure as? PostgresError)?.sqlState
        return state == .lockNotAvailable || state == .deadlockDetected
    }
}

/// Exponential backoff with jitter between the attempts of a transaction.
public struct RetrySchedule: Sendable, Equatable {
    /// Attempts in all, the first included.
    public var attempts: Int
    /// The longest wait after the first attempt; doubles after each further one.
    public var initialDelay: TimeInterval
    public var maximumDelay: TimeInterval

    public init(attempts: Int, initialDelay: TimeInterval = 0.1, maximumDelay: TimeInterval = 5) {
        precondition(attempts >= 1, "a retry schedule needs at least one attempt")
        self.attempts = attempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    /// The wait after attempt `attempt` (1-based): between half and all of
    /// `min(maximumDelay, initialDelay * 2^(attempt-1))`, placed by `jitter` in 0...1 so that
    /// processes retrying together spread out.
    public func delay(after attempt: Int, jitter: Double) -> TimeInterval {
        precondition(attempt >= 1 && (0...1).contains(jitter), "attempt \(attempt), jitter \(jitter)")
        let ceiling = min(maximumDelay, initialDelay * pow(2, Double(min(attempt - 1, 62))))
        return ceiling / 2 + ceiling / 2 * jitter
    }

    /// The longest total wait between attempts, for documentation and tests.
    public var longestTotalDelay: TimeInterval {
        (1..<attempts).reduce(0) { $0 + delay(after: $1, jitter: 1) }
    }
}
