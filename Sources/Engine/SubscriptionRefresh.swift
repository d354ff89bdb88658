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
///
/// Every wait is bounded. REFRESH asks the publisher for its tables over a connection of its
/// own, which may not answer: each statement of 2 runs under a `statement_timeout` shorter than
/// the guard's `idle_in_transaction_session_timeout`, and the guard is sent a statement before
/// each, so it cannot be ended (letting the worker in) while a refresh still runs.
enum SubscriptionRefresh {
    /// The longest wait for a worker to end after a failed refresh.
    static let workerStopSeconds = 60.0

    /// The bound of each ENABLE and REFRESH: the guard's idle timeout less a margin for the
    /// statement sent to it in between, at least a second.
    static func statementTimeoutMilliseconds(idleTimeoutMilliseconds: Int) -> Int {
        max(1000, idleTimeoutMilliseconds - max(1000, idleTimeoutMilliseconds / 5))
    }

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
        let bound = statementTimeoutMilliseconds(idleTimeoutMilliseconds: policy.idleInTransactionTimeoutMilliseconds)
        let sessionBound = try connection.execute("SELECT current_setting('statement_timeout') AS value").value(0, "value") ?? "0"
        try connection.execute("SET statement_timeout = \(literal: bound)")
        defer { _ = try? connection.execute("SELECT set_config('statement_timeout', \(sessionBound), false)") }
        do {
            for name in subscriptions {
                for (what, statement) in [("ENABLE", "ALTER SUBSCRIPTION \(ident: name) ENABLE" as SQL), ("REFRESH PUBLICATION", "ALTER SUBSCRIPTION \(ident: name) REFRESH PUBLICATION WITH (copy_data = false)")] {
                    _ = try guardSession.execute("SELECT 1")
                    do {
                        _ = try connection.execute(statement)
                    } catch let error as PostgresError where error.sqlState == .queryCanceled {
                        throw RefreshTimedOut(subscription: name, statement: what, milliseconds: bound)
                    }
                }
            }
        } catch {
            // Bounded too: the statement timeout is still set.
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

/// `ALTER SUBSCRIPTION … ENABLE` or `REFRESH PUBLICATION` on a subscriber did not end within its
/// bound: the subscriber could not get an answer from the publisher (REFRESH asks it for its
/// tables) or a lock. The subscriptions were disabled again, and nothing of the store was applied.
public struct RefreshTimedOut: Error, CustomStringConvertible {
    public var subscription: String
    public var statement: String
    public var milliseconds: Int

    public var description: String {
        "ALTER SUBSCRIPTION \(quoteIdentifier(subscription)) \(statement) did not end within \(milliseconds) ms "
            + "(it waits for the publisher to answer, and for its locks): the subscriber's subscriptions were disabled again "
            + "and nothing of the store was applied; check that the subscriber reaches the publisher, then run apply again "
            + "(--idle-timeout raises the bound)"
    }
}
