import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// The write guard of a heavyweight step: a second session holding SHARE locks on the old
/// store's tables (reads go on, writes wait) until the swap has committed. It dies with the
/// process; it is bounded on the server side too:
///
/// 1. Its transaction runs with `idle_in_transaction_session_timeout` (the execution policy's),
///    and a thread of its own sends a statement every third of that. A process that stops
///    answering (SIGSTOP, a paused VM, a lost network) sends none, so PostgreSQL ends the
///    guard's session after that long and the writers go on.
/// 2. Nothing the step then writes may count on the guard: each checkpoint finds no write
///    logged since the guard was taken (`requireNoWrites`), and the swap's transaction, right
///    before it commits, finds the guard's locks still held (`requireHeld`), under an idle
///    timeout of a third of the guard's, so that a process stopped in between loses its swap
///    before the guard. The step then fails, and the next `apply` resumes as after a crash.
final class WriteGuard: @unchecked Sendable {
    let session: PostgresConnection
    /// The session's backend, whose locks `requireHeld` looks for.
    let pid: Int
    /// The change log's last entry once the guard held its locks.
    var changesSeen = 0
    private let condition = NSCondition()
    private var isStopped = false
    private let stopped = DispatchSemaphore(value: 0)

    /// Begins the guard's transaction under `policy` on `session` (opened beforehand), else on
    /// a new session to `connection`'s server, and takes `statement`'s locks in it.
    init(statement: PlannedStatement, from connection: PostgresConnection, session opened: PostgresConnection? = nil, policy: ExecutionPolicy) throws {
        let session = try opened ?? connection.reconnect()
        pid = session.backendPID
        do {
            try policy.openTransaction(on: session) { _ = try session.execute(statement.sql) }
        } catch {
            session.close()
            throw error
        }
        self.session = session
        let interval = Double(policy.idleInTransactionTimeoutMilliseconds) / 3000
        let thread = Thread { [self] in
            keepAlive(every: interval)
            stopped.signal()
        }
        thread.name = "orchestrator write guard"
        thread.start()
    }

    /// The idle timeout of the swap's transaction: a third of the guard's.
    static func swapIdleTimeout(_ policy: ExecutionPolicy) -> Int {
        max(1, policy.idleInTransactionTimeoutMilliseconds / 3)
    }

    private func keepAlive(every interval: TimeInterval) {
        while true {
            condition.lock()
            if !isStopped { _ = condition.wait(until: Date().addingTimeInterval(interval)) }
            let stop = isStopped
            condition.unlock()
            // A guard the server ended stays ended: `requireHeld` tells the step.
            if stop || (try? session.execute("SELECT 1")) == nil { return }
        }
    }

    /// Ends the guard: its transaction goes with the session, and its locks with it.
    func close() {
        condition.lock()
        let wasStopped = isStopped
        isStopped = true
        condition.signal()
        condition.unlock()
        guard !wasStopped else { return }
        stopped.wait()
        session.close()
    }

    /// On `connection`, in the swap's transaction: the guard's session still holds its locks.
    func requireHeld(on connection: PostgresConnection) throws {
        let held = try connection.execute("""
            SELECT count(*) AS n FROM pg_locks WHERE pid = \(pid) AND granted AND locktype = 'relation' AND mode = 'ShareLock'
            """).int(0, "n") ?? 0
        if held == 0 { throw WriteGuardLost(pid: pid, reason: "its session is gone") }
    }

    /// No write was logged since the guard was taken (`seen`: the change log's last entry now).
    func requireNoWrites(seen: Int) throws {
        guard seen != changesSeen else { return }
        throw WriteGuardLost(pid: pid, reason: "\(seen - changesSeen) write(s) to the old store were logged since it was taken")
    }
}

/// The write guard's session ended before the swap (PostgreSQL ends it after its idle timeout
/// when the process stops answering): the step stops, as after a crash.
public struct WriteGuardLost: Error, CustomStringConvertible {
    public var pid: Int
    public var reason: String

    public var description: String {
        "the write guard (pid \(pid)) stopped keeping writes out of the old store (\(reason)), most likely ended by PostgreSQL after its idle_in_transaction_session_timeout while the process did not answer; the store is at the version it had, and the next apply continues as after a crash"
    }
}
