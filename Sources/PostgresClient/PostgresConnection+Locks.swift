import CLibPQ
import SQLBuilding
import Foundation

/// Session- and transaction-scoped advisory locks (`pg_advisory_lock` and friends).
extension PostgresConnection {
    /// A 64-bit advisory lock key for a name: FNV-1a 64 over the name's UTF-8 bytes.
    ///
    /// Stable across releases and platforms (it does not use Swift's seeded `Hasher`), so processes
    /// running different versions of the orchestrator agree on the key. Changing it is a breaking
    /// change.
    public static func advisoryLockKey(for name: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    /// Waits until this session holds the lock. Session locks stack: unlock once per lock.
    public func advisoryLock(key: Int64) throws {
        try execute("SELECT pg_advisory_lock(\(key))")
    }

    /// Takes the lock if no other session holds it; returns whether it did.
    public func tryAdvisoryLock(key: Int64) throws -> Bool {
        try execute("SELECT pg_try_advisory_lock(\(key)) AS acquired").bool(0, "acquired") == true
    }

    /// Releases one hold of the lock; returns false if this session did not hold it.
    @discardableResult
    public func advisoryUnlock(key: Int64) throws -> Bool {
        try execute("SELECT pg_advisory_unlock(\(key)) AS released").bool(0, "released") == true
    }

    /// Waits for the lock and holds it until the current transaction ends.
    ///
    /// Must be called inside `transaction(_:)`; outside one the lock would be released at once.
    public func advisoryTransactionLock(key: Int64) throws {
        precondition(
            PQtransactionStatus(openConnection()) != PQTRANS_IDLE,
            "advisoryTransactionLock(key:) called outside a transaction on \(self)"
        )
        try execute("SELECT pg_advisory_xact_lock(\(key))")
    }
}

/// A session holding an advisory lock, as `pg_locks` and `pg_stat_activity` show it.
public struct AdvisoryLockHolder: Sendable, Equatable, CustomStringConvertible {
    public var pid: Int
    public var applicationName: String
    public var user: String?
    /// When the holder's session connected (PostgreSQL does not record when a lock was taken).
    public var connectedSince: String?
    /// `active`, `idle`, `idle in transaction`…
    public var state: String?

    public var description: String {
        var details = ["application_name '\(applicationName)'"]
        if let user { details.append("user \(user)") }
        if let connectedSince { details.append("connected since \(connectedSince)") }
        if let state { details.append(state) }
        return "pid \(pid) (\(details.joined(separator: ", ")))"
    }
}

extension PostgresConnection {
    /// The sessions other than this one holding the advisory lock `key`. A bigint key shows in
    /// `pg_locks` split in two: its high half as `classid`, its low half as `objid`.
    public func advisoryLockHolders(key: Int64) throws -> [AdvisoryLockHolder] {
        let bits = UInt64(bitPattern: key)
        let high = String(bits >> 32)
        let low = String(bits & 0xFFFF_FFFF)
        let result = try execute("""
            SELECT l.pid, coalesce(a.application_name, '') AS application_name, a.usename AS user_name,
                   to_char(a.backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"') AS connected_since, a.state
            FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
              AND l.classid = \(high)::oid AND l.objid = \(low)::oid AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND l.pid <> pg_backend_pid()
            ORDER BY l.pid
            """)
        return result.rows.indices.map { row in
            AdvisoryLockHolder(
                pid: Int(result.int(row, "pid") ?? 0), applicationName: result.value(row, "application_name") ?? "",
                user: result.value(row, "user_name"), connectedSince: result.value(row, "connected_since"),
                state: result.value(row, "state")
            )
        }
    }
}

extension PostgresConnection {
    /// Sets `lock_timeout` for the rest of the session and watches every statement's lock waits
    /// (`LockWaitBound`); sessions opened by `reconnect()` get the same bound.
    public func bound(lockWaits bound: LockWaitBound) throws {
        try execute("SELECT set_config('lock_timeout', \(String(bound.milliseconds) + "ms"), false)")
        lockWatcher = LockWatcher(bound: bound, session: self)
    }

    /// While `body` runs, waiting statements are looked at after `seconds` instead of the
    /// bound's time: inside a transaction with a shorter `lock_timeout` of its own.
    public func lookingAtLockWaits<T>(after seconds: TimeInterval, _ body: () throws -> T) rethrows -> T {
        guard let lockWatcher else { return try body() }
        let previous = lockWatcher.lookAfter
        lockWatcher.lookAfter = seconds
        defer { lockWatcher.lookAfter = previous }
        return try body()
    }
}
