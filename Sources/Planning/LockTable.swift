import ObjectModel

/// The size of the server's shared lock table: `max_locks_per_transaction` × (the server's
/// backends + `max_prepared_transactions`) locked objects, shared by every session.
/// One transaction that locks more runs out of it ("out of shared memory"), whatever
/// `max_locks_per_transaction` says per transaction.
public struct LockTableSettings: Sendable, Hashable {
    public var maxLocksPerTransaction: Int
    /// `max_connections`, autovacuum workers and launcher, `max_worker_processes`,
    /// `max_wal_senders` and `max_prepared_transactions`: the slots the lock table is sized for.
    public var backends: Int

    public init(maxLocksPerTransaction: Int, backends: Int) {
        self.maxLocksPerTransaction = maxLocksPerTransaction
        self.backends = backends
    }

    public var capacity: Int { maxLocksPerTransaction * max(1, backends) }

    /// Creating a store locks every relation it makes until the transaction ends: each
    /// hierarchy table with its identity sequence, primary key, TOAST table and TOAST index
    /// (5), each join table with its primary key (2), and every other index and unique
    /// constraint (1). Measured on PostgreSQL 15 with pg_locks.
    public static func relationsLocked(creating layout: StoreLayout) -> Int {
        layout.tables.reduce(0) { total, table in
            let own = if case .hierarchy = table.kind { 5 } else { 2 }
            return total + own + table.indexes.count + table.uniqueConstraints.count
        }
    }

    /// A hazard when creating `layout` would lock more objects than the lock table holds,
    /// saying what to set; nil when it fits.
    public func hazard(creating layout: StoreLayout) -> Hazard? {
        let needed = Self.relationsLocked(creating: layout)
        guard needed > capacity else { return nil }
        let setting = (needed + needed / 4 + backends - 1) / max(1, backends)
        return Hazard(
            code: "lockTableTooSmall",
            message: "creating the store locks about \(needed) relations in one transaction; this server's lock table holds about \(capacity) (max_locks_per_transaction \(maxLocksPerTransaction) × \(backends) server processes and prepared transactions), so apply may fail with 'out of shared memory': set max_locks_per_transaction to at least \(setting) and restart PostgreSQL"
        )
    }
}
