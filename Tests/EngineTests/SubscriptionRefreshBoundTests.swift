import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport
@testable import Engine

/// `apply --subscriber` enables a subscriber's subscriptions and refreshes them while a guard
/// session holds the store's tables (`SubscriptionRefresh`). Each of those statements has a
/// bound shorter than the guard's idle timeout: one that cannot end (here: the subscription held
/// by another session, as a publisher that never answers would hold REFRESH) ends with a clear
/// error, the subscription disabled, and the guard gone, within the bound.
@Suite(integration) struct SubscriptionRefreshBoundTests {
    static let unfinishedRefreshBoundSeconds = 30.0

    @Test func aSubscriptionStatementThatCannotEndStopsWithinItsBoundAndLetsTheStoreGo() throws {
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try connection.execute("CREATE SCHEMA shop")
            try connection.execute("CREATE TABLE shop.recipe (_pk bigint PRIMARY KEY)")
            // Never connected: no publisher is needed to hold the subscription.
            try connection.execute("""
                CREATE SUBSCRIPTION refresh_bound CONNECTION 'host=127.0.0.1 port=1 dbname=nowhere connect_timeout=2'
                PUBLICATION shop_pub WITH (connect = false)
                """)
            defer {
                _ = try? connection.execute("ALTER SUBSCRIPTION refresh_bound DISABLE")
                _ = try? connection.execute("ALTER SUBSCRIPTION refresh_bound SET (slot_name = NONE)")
                _ = try? connection.execute("DROP SUBSCRIPTION refresh_bound")
            }
            let holder = try PostgresConnection(url: url)
            defer { holder.close() }
            try holder.execute("BEGIN")
            try holder.execute("ALTER SUBSCRIPTION refresh_bound SET (synchronous_commit = 'off')")

            let policy = ExecutionPolicy(lockTimeoutMilliseconds: 500, idleInTransactionTimeoutMilliseconds: 3000, retries: RetrySchedule(attempts: 1))
            let bound = SubscriptionRefresh.statementTimeoutMilliseconds(idleTimeoutMilliseconds: 3000)
            #expect(bound == 2000)
            let started = Date()
            let error = #expect(throws: RefreshTimedOut.self) {
                try SubscriptionRefresh.enable(["refresh_bound"], store: "shop", policy: policy, on: connection)
            }
            let elapsed = Date().timeIntervalSince(started)
            #expect(elapsed >= 1.5 && elapsed < Self.unfinishedRefreshBoundSeconds, "took \(elapsed) s")
            #expect(error?.statement == "ENABLE")
            #expect(error?.description.hasPrefix("ALTER SUBSCRIPTION \"refresh_bound\" ENABLE did not end within 2000 ms") == true)
            #expect(error?.description.contains("nothing of the store was applied") == true)
            try holder.execute("ROLLBACK")

            // The guard let the store go: a writer gets its lock at once.
            let writer = try PostgresConnection(url: url)
            defer { writer.close() }
            try writer.execute("SET lock_timeout = 1000")
            #expect(try writer.execute("INSERT INTO shop.recipe VALUES (1)").affectedRows == 1)
            // Never enabled, and the session's own statement timeout is back.
            #expect(try connection.execute("SELECT subenabled FROM pg_subscription WHERE subname = 'refresh_bound'").bool(0, "subenabled") == false)
            #expect(try connection.execute("SELECT current_setting('statement_timeout') AS value").value(0, "value") == "0")
        }
    }
}
