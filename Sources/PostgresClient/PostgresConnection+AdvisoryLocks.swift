import CLibPQ
import SQLBuilding

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
