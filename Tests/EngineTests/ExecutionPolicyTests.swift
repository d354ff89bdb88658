import Foundation
import Planning
import PostgresClient
import Testing
@testable import Engine

/// The retry schedule and which failures are retried: no database needed.
@Suite("Execution policy")
struct ExecutionPolicyTests {
    @Test("the wait after each attempt doubles from 0.1 s up to 5 s, jitter placing it between half and all of that")
    func backoffSchedule() {
        let schedule = RetrySchedule(attempts: 10)
        let ceilings: [TimeInterval] = [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5, 5, 5]
        for (index, ceiling) in ceilings.enumerated() {
            let attempt = index + 1
            #expect(abs(schedule.delay(after: attempt, jitter: 1) - ceiling) < 1e-9, "attempt \(attempt)")
            #expect(abs(schedule.delay(after: attempt, jitter: 0) - ceiling / 2) < 1e-9, "attempt \(attempt)")
            #expect(abs(schedule.delay(after: attempt, jitter: 0.5) - ceiling * 0.75) < 1e-9, "attempt \(attempt)")
        }
        #expect(abs(schedule.longestTotalDelay - ceilings.reduce(0, +)) < 1e-9)
        // Far attempts stay at the cap instead of overflowing.
        #expect(schedule.delay(after: 500, jitter: 1) == 5)
    }

    @Test("the defaults keep every reader and writer within about a second of orchestrator's lock requests")
    func defaults() {
        let policy = ApplyOptions().executionPolicy
        #expect(policy.lockTimeoutMilliseconds <= 1000)
        #expect(policy.retries.attempts == 10)
        #expect(policy.idleInTransactionTimeoutMilliseconds == 30_000)
        // The whole patience stays near the former 29 s: ten tries of 0.5 s and at most 23.1 s of backoff.
        #expect(Double(policy.lockTimeoutMilliseconds) / 1000 * 10 + policy.retries.longestTotalDelay < 30)
    }

    @Test("lock-not-available and deadlocks are retried, also inside a pass; other failures are not")
    func retryableFailures() {
        let lock = PostgresError(kind: .query, message: "canceling statement due to lock timeout", sqlState: SQLState.lockNotAvailable)
        let deadlock = PostgresError(kind: .query, message: "deadlock detected", sqlState: SQLState.deadlockDetected)
        let missing = PostgresError(kind: .query, message: "relation does not exist", sqlState: SQLState.undefinedTable)
        #expect(ExecutionPolicy.isRetryable(lock))
        #expect(ExecutionPolicy.isRetryable(deadlock))
        #expect(!ExecutionPolicy.isRetryable(missing))
        #expect(!ExecutionPolicy.isRetryable(CancellationError()))
        let statement = PlannedStatement("SELECT 1", lock: .none, summary: "a statement of a pass")
        #expect(ExecutionPolicy.isRetryable(PassFailure(statement: statement, underlying: deadlock)))
        #expect(!ExecutionPolicy.isRetryable(PassFailure(statement: statement, underlying: missing)))
    }

    @Test("a transaction blocked twice runs a third time after two backoffs within the schedule")
    func retriesUntilSuccess() throws {
        let waits = Waits()
        var policy = ApplyOptions().executionPolicy
        policy.sleep = { waits.append($0) }
        var attempts = 0
        let value = try policy.retrying { () throws -> String in
            attempts += 1
            if attempts < 3 { throw PostgresError(kind: .query, message: "deadlock detected", sqlState: SQLState.deadlockDetected) }
            return "done"
        }
        #expect(value == "done")
        #expect(attempts == 3)
        #expect(waits.values.count == 2)
        #expect((0.05...0.1).contains(waits.values[0]) && (0.1...0.2).contains(waits.values[1]), "\(waits.values)")
    }

    @Test("after the last attempt the lock failure is thrown; other failures are thrown at once")
    func givesUp() {
        let waits = Waits()
        var policy = ExecutionPolicy(lockTimeoutMilliseconds: 100, idleInTransactionTimeoutMilliseconds: 1000, retries: RetrySchedule(attempts: 4))
        policy.sleep = { waits.append($0) }
        var attempts = 0
        #expect(throws: PostgresError.self) {
            try policy.retrying { () throws -> Void in
                attempts += 1
                throw PostgresError(kind: .query, message: "lock timeout", sqlState: SQLState.lockNotAvailable)
            }
        }
        #expect(attempts == 4)
        #expect(waits.values.count == 3)
        attempts = 0
        #expect(throws: PostgresError.self) {
            try policy.retrying { () throws -> Void in
                attempts += 1
                throw PostgresError(kind: .query, message: "syntax error", sqlState: .syntaxError)
            }
        }
        #expect(attempts == 1)
    }
}

/// The waits a policy asked for, in order.
private final class Waits: @unchecked Sendable {
    private(set) var values: [TimeInterval] = []
    func append(_ value: TimeInterval) { values.append(value) }

    @Test("the last attempt's lock timeout names the holder an earlier attempt saw, in a pass too")
    func lastTimeoutNamesTheHolder() throws {
        var policy = ExecutionPolicy(lockTimeoutMilliseconds: 100, idleInTransactionTimeoutMilliseconds: 1000, retries: RetrySchedule(attempts: 3))
        policy.sleep = { _ in }
        let wait = LockWait(lock: "shop.item", holders: [LockHolder(pid: 42, applicationName: "psql", state: "idle in transaction", query: "LOCK shop.item")])
        for inPass in [false, true] {
            var attempts = 0
            let error = try #require(throws: (any Error).self) {
                try policy.retrying { () throws -> Void in
                    attempts += 1
                    var timeout = PostgresError(kind: .query, message: "canceling statement due to lock timeout", sqlState: .lockNotAvailable)
                    if attempts == 1 { timeout.lockWait = wait }
                    guard inPass else { throw timeout }
                    throw PassFailure(statement: PlannedStatement("SELECT 1", lock: .none, summary: "a statement"), underlying: timeout)
                }
            }
            #expect(attempts == 3)
            #expect(ExecutionPolicy.lockTimeout(in: error)?.lockWait == wait, "\(error)")
            #expect(String(describing: error).contains("canceling statement due to lock timeout: shop.item is locked by pid 42 (application_name 'psql', idle in transaction, query: LOCK shop.item)"), "\(error)")
            #expect((error as? PassFailure != nil) == inPass)
        }
    }
}
