import Foundation
import Planning
import PostgresClient
import SQLBuilding

extension SubscriptionRefresh {
    /// Step 2 of `applyCreatingFirst` on one subscriber, bounded as `enable` is. No guard
    /// session: no row of `tables` exists at the publisher yet, so the worker has none to skip.
    static func learn(_ tables: [String], by subscriptions: [String], store: String, policy: ExecutionPolicy, on connection: PostgresConnection) throws {
        let bound = statementTimeoutMilliseconds(idleTimeoutMilliseconds: policy.idleInTransactionTimeoutMilliseconds)
        let sessionBound = try connection.execute("SELECT current_setting('statement_timeout') AS value").value(0, "value") ?? "0"
        try connection.execute("SET statement_timeout = \(literal: bound)")
        defer { _ = try? connection.execute("SELECT set_config('statement_timeout', \(sessionBound), false)") }
        for name in subscriptions {
            do {
                _ = try connection.execute("ALTER SUBSCRIPTION \(ident: name) REFRESH PUBLICATION WITH (copy_data = false)")
            } catch let error as PostgresError where error.sqlState == .queryCanceled {
                throw NewTablesNotLearned(subscription: name, tables: tables.map { "\(store).\($0)" }, why: "REFRESH PUBLICATION did not end within \(bound) ms (it asks the publisher for its tables)")
            }
            let missing = try connection.execute("""
                SELECT coalesce(string_agg(t, ', '), '') AS missing FROM unnest(ARRAY[\(literals: tables)]::text[]) AS t
                WHERE NOT EXISTS (SELECT 1 FROM pg_subscription_rel r JOIN pg_subscription s ON s.oid = r.srsubid
                  WHERE s.subname = \(name) AND s.subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                    AND r.srrelid = to_regclass(format('%I.%I', \(store)::text, t)) AND r.srsubstate = 'r')
                """).value(0, "missing") ?? ""
            guard missing.isEmpty else {
                throw NewTablesNotLearned(subscription: name, tables: missing.components(separatedBy: ", ").map { "\(store).\($0)" }, why: "after REFRESH PUBLICATION it has no ready record of them (is the publication the one it reads?)")
            }
        }
    }
}

/// A subscription did not learn the tables the publisher created first: their rows would be
/// skipped, so the publisher's step does not run.
public struct NewTablesNotLearned: Error, CustomStringConvertible {
    public var subscription: String
    public var tables: [String]
    public var why: String

    public var description: String {
        "subscription \(subscription) does not know the step's new tables \(tables.joined(separator: ", ")): \(why); the publisher's step did not run"
    }
}
