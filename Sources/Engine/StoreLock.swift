import Foundation
import PostgresClient

/// The store's advisory lock is held by another session and `ApplyOptions.lockWaitSeconds`
/// ran out: nothing was changed.
public struct StoreLocked: Error, CustomStringConvertible {
    public var store: String
    public var holders: [AdvisoryLockHolder]
    public var waitedSeconds: Double

    public var description: String {
        let who = holders.isEmpty ? "another session" : holders.map(\.description).joined(separator: "; ")
        return "store \(store) is being migrated by \(who); gave up after waiting \(formatted(waitedSeconds)) s for its lock (--lock-wait); nothing was changed"
    }
}

/// The session-level advisory lock that serializes `apply` runs on one store.
struct StoreLock {
    var store: String
    var connection: PostgresConnection
    /// How often a waiting process tries the lock again.
    static let pollInterval: TimeInterval = 0.2

    var key: Int64 { PostgresConnection.advisoryLockKey(for: "orchestrator:store:" + store) }

    /// Takes the lock, waiting at most `seconds`. Tells `onWait` who holds it when the wait
    /// starts and whenever the holder changes; throws `StoreLocked` naming them when time is up.
    func acquire(waitingAtMost seconds: Double, onWait: ([AdvisoryLockHolder]) -> Void) throws {
        let started = Date()
        var reported: [AdvisoryLockHolder]?
        while try !connection.tryAdvisoryLock(key: key) {
            let holders = try connection.advisoryLockHolders(key: key)
            let waited = Date().timeIntervalSince(started)
            guard waited < seconds else { throw StoreLocked(store: store, holders: holders, waitedSeconds: waited) }
            if holders.map(\.pid) != reported?.map(\.pid), !holders.isEmpty {
                onWait(holders)
                reported = holders
            }
            Thread.sleep(forTimeInterval: min(Self.pollInterval, max(0, seconds - waited)))
        }
    }

    func release() {
        _ = try? connection.advisoryUnlock(key: key)
    }
}

private func formatted(_ seconds: Double) -> String {
    String(format: "%.1f", seconds)
}
