import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// What a heavyweight step leaves to remove once its swap has committed: the change triggers
/// and their functions on the old tables (the backup `<store>~` now), and the old store itself
/// when no backup is kept (`<store>~retired`). Dropping them takes ACCESS EXCLUSIVE on the old
/// tables, which any transaction that read the old store still holds a lock on (a `pg_dump`, a
/// REPEATABLE READ report): so the cleanup waits `lock_timeout` per attempt, for a few
/// attempts, and is otherwise deferred to the next `apply` (or `restore`), which does it first.
public enum StoreCleanup {
    /// Attempts of a cleanup, each under the execution policy's `lock_timeout`: a passing
    /// reader is waited for, a long one is not (the step is done).
    static let attempts = 3

    /// Removes what the swap left in `schema` (`role`: backup or retired); nil when done, the
    /// reason when it could not (its lock, or another failure: the step stays done either way).
    static func clean(_ schema: String, role: StoreSchemas.Role, policy: ExecutionPolicy, on connection: PostgresConnection) -> DeferredCleanup? {
        var policy = policy
        policy.retries.attempts = min(policy.retries.attempts, attempts)
        do {
            try drop(schema, role: role, policy: policy, on: connection)
            return nil
        } catch {
            return DeferredCleanup(schema: schema, role: role, reason: reason(error, policy: policy))
        }
    }

    private static func drop(_ schema: String, role: StoreSchemas.Role, policy: ExecutionPolicy, on connection: PostgresConnection) throws {
        try policy.transaction(on: connection) {
            _ = try connection.execute(ChangeTracking.remove(from: schema).sql)
            _ = try connection.execute(OnlineCatchUp.remove(from: schema))
            for statement in try StorePublications.leaving(schema, on: connection) { _ = try connection.execute(statement) }
            if role == .retired {
                _ = try connection.execute("DROP SCHEMA IF EXISTS \(ident: schema) CASCADE")
                try StoreSchemas.unregister(schema, on: connection)
            }
        }
    }

    private static func reason(_ error: Error, policy: ExecutionPolicy) -> String {
        guard let failure = error as? PostgresError, ExecutionPolicy.isRetryable(failure) else { return String(describing: error) }
        let tries = "not granted within \(policy.retries.attempts) attempt(s) of \(policy.lockTimeoutMilliseconds) ms (--lock-timeout)"
        guard let wait = failure.lockWait else { return "a lock on its tables was \(tries)" }
        return "\(wait), and the lock was \(tries)"
    }

    /// What a crash or a deferred cleanup after a heavyweight swap left: the change triggers on
    /// the old tables (now the backup), a retired old store. Removed under the store's lock.
    /// `apply` passes `deferring`: what cannot get its lock stays, and is returned; `restore`
    /// does not (a backup keeping its triggers cannot become the store), and fails instead.
    static func removeLeftovers(
        store: String, on connection: PostgresConnection, lockWaitSeconds: Double, policy: ExecutionPolicy, deferring: Bool = false,
        onLockWait: ([AdvisoryLockHolder]) -> Void
    ) throws -> [DeferredCleanup] {
        guard try MetadataSchema.hasStoreSchemas(on: connection) else { return [] }
        let function = "." + quoteIdentifier(ChangeTracking.function) + "()"
        let query: SQL = """
            SELECT s.schema, s.role FROM \(ident: MetadataSchema.schema, StoreSchemas.table) AS s JOIN pg_namespace AS n ON n.nspname = s.schema
            WHERE s.store = \(store) AND (s.role = 'retired' OR (s.role = 'backup' AND to_regprocedure(quote_ident(s.schema) || \(function)) IS NOT NULL))
            """
        guard !(try connection.execute(query)).isEmpty else { return [] }
        let lock = StoreLock(store: store, connection: connection)
        try lock.acquire(waitingAtMost: lockWaitSeconds, onWait: onLockWait)
        defer { lock.release() }
        let leftovers = try connection.execute(query)
        var deferred: [DeferredCleanup] = []
        for row in leftovers.rows.indices {
            guard let schema = leftovers.value(row, "schema"),
                  let role = StoreSchemas.Role(rawValue: leftovers.value(row, "role") ?? "") else { continue }
            if deferring {
                if let left = clean(schema, role: role, policy: policy, on: connection) { deferred.append(left) }
            } else {
                try drop(schema, role: role, policy: policy, on: connection)
            }
        }
        return deferred
    }
}

/// A cleanup after a heavyweight swap that could not be done now; the step is done all the same.
public struct DeferredCleanup: Sendable, Hashable, CustomStringConvertible {
    public var schema: String
    public var role: StoreSchemas.Role
    public var reason: String

    public var description: String {
        let name = quoteIdentifier(schema)
        switch role {
        case .retired:
            return "cleanup deferred: the old store \(name) was not dropped yet: \(reason); the next apply drops it"
        case .backup, .staging:
            return "cleanup deferred: the change triggers on the backup \(name) were not dropped yet: \(reason); the next apply or restore drops them (or drop the backup: DROP SCHEMA \(name) CASCADE)"
        }
    }
}
