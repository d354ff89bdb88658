import Foundation
import PostgresClient
import SQLBuilding

/// `apply --subscriber`, last step on a subscriber (docs/replication.md): its subscriptions,
/// disabled while it migrated, are enabled and learn the tables its swap put in place of the
/// old ones with `ALTER SUBSCRIPTION … REFRESH PUBLICATION WITH (copy_data = false)` (the
/// rows are there already: the subscriber's own step made them from its own).
///
/// PostgreSQL refuses REFRESH on a disabled subscription, and runs it in a transaction of its
/// own: the apply worker starts first. A change it applies to a table the subscription has no
/// record of yet is skipped, silently, and never comes again. So:
/// 1. a second session holds every table of the store in SHARE mode, which the worker's ROW
///    EXCLUSIVE waits for and REFRESH's ACCESS SHARE does not;
/// 2. ENABLE, then REFRESH: the worker, started, waits for its first table of the store;
/// 3. the guard commits: the worker locks the table, then reads its record, and finds it.
/// A failure in 2 disables the subscriptions again and ends their workers (waiting on the
/// guard, they have applied nothing of the store) before the guard lets go.
enum SubscriptionRefresh {
    /// The longest wait for a worker to end after a failed refresh.
    static let workerStopSeconds = 60.0

    static func enable(_ subscriptions: [String], store: String, policy: ExecutionPolicy, on connection: PostgresConnection) throws {
        let guardSession = try connection.reconnect()
        defer { guardSession.close() }
        try policy.openTransaction(on: guardSession) {
            let tables = try guardSession.execute("""
                SELECT string_agg(format('%I.%I', n.nspname, c.relname), ', ' ORDER BY c.relname) AS tables
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = \(store) AND c.relkind IN ('r', 'p')
                """).value(0, "tables")
            if let tables { _ = try guardSession.execute("LOCK TABLE \(unsafeRaw: tables) IN SHARE MODE") }
        }
        do {
            for name in subscriptions {
                _ = try connection.execute("ALTER SUBSCRIPTION \(ident: name) ENABLE")
                _ = try connection.execute("ALTER SUBSCRIPTION \(ident: name) REFRESH PUBLICATION WITH (copy_data = false)")
            }
        } catch {
            disable(subscriptions, on: connection)
            _ = try? guardSession.execute("ROLLBACK")
            throw error
        }
        _ = try guardSession.execute("COMMIT")
    }

    /// Disables `subscriptions` and ends their workers, waiting (bounded) until they are gone.
    private static func disable(_ subscriptions: [String], on connection: PostgresConnection) {
        for name in subscriptions { _ = try? connection.execute("ALTER SUBSCRIPTION \(ident: name) DISABLE") }
        let deadline = Date().addingTimeInterval(workerStopSeconds)
        while Date() < deadline {
            let running = try? connection.execute("""
                SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_subscription WHERE subname IN (\(literals: subscriptions)) AND pid IS NOT NULL
                """).int(0, "n")
            if running == 0 { return }
            Thread.sleep(forTimeInterval: 0.2)
        }
    }
}
