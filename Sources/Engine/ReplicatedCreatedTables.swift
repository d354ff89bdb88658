import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// `ReplicatedBackfill`'s order for a step that creates a table the publisher publishes and
/// fills it (a to-one made to-many: the join table, filled from the to-one's column, which the
/// step drops). A subscription knows the tables it writes into by its records
/// (`pg_subscription_rel`); its apply worker skips, silently and for good, a row of a table it
/// has no ready record of, and `REFRESH PUBLICATION` can give it one only once the publisher
/// publishes the table. So the publisher's side goes:
/// 1. under the publisher's store lock, in one transaction: the step's new tables, bare, and
///    each `FOR TABLE` publication naming a table whose columns the step drops takes them
///    (a `FOR TABLES IN SCHEMA` publication publishes them by itself); the store stays at its
///    version, and no row of them exists;
/// 2. each subscriber's subscriptions: `REFRESH PUBLICATION WITH (copy_data = false)` (there is
///    nothing to copy), then each must hold a ready (`r`) record of every new table, or the run
///    stops, the new tables dropped again on every side (`AddedColumnsUndo`);
/// 3. the rest of the publisher's step (`SubscriberSplit.publisherRemaining`), as `apply` runs a
///    step: its fill replicates into the subscribers' tables, which then know them.
/// No row of a new table exists before 2 ends, so no worker can skip one: nothing races.
extension ReplicatedApply {
    func applyCreatingFirst(
        _ theirs: MigrationPlan, subscriptions: [[(subscription: String, slot: String)]], undo: inout AddedColumnsUndo, options: ApplyOptions,
        onStep: (Int, Int, PlannedStep) -> Void, onProgress: (ProgressEvent) -> Void, onLockWait: ([AdvisoryLockHolder]) -> Void
    ) throws -> ApplyReport {
        let connection = publisher.connection, store = publisher.store
        try options.expectedPlan?.requireSame(as: theirs, migrator: publisher, online: options.online, expand: options.expand)
        try MetadataSchema.bootstrap(on: connection)
        let lock = StoreLock(store: store, connection: connection)
        try lock.acquire(waitingAtMost: options.lockWaitSeconds, onWait: onLockWait)
        defer { lock.release() }
        let plan = try publisher.plan(mode: options.planMode)
        guard plan.steps.count == 1, plan.steps.map(\.statements) == theirs.steps.map(\.statements) else {
            throw ReplicatedApplyRefused(reason: "store \(store) was changed by someone else while apply --subscriber ran (the publisher's plan is not the one made at the start)")
        }
        try publisher.requireRunnable(plan, options: options)
        let published = try publishedTables()
        guard let split = SubscriberSplit(plan.steps[0], published: published, schemaPublished: try schemaPublished()), split.publishesCreated else {
            preconditionFailure("the publisher's step creates the published tables its subscribers' steps create")
        }
        let lists = plan.replication.publications.filter { $0.form == .tableList && !Set($0.tables).isDisjoint(with: split.droppedFrom) }
        let created = try options.executionPolicy.transaction(on: connection) {
            let created = try ReplicatedBackfill.runKeepingExisting(zip(split.createdFirst, split.createdTables).map { $0 }, on: connection)
            for publication in lists {
                for table in split.createdTables where !publication.tables.contains(table) {
                    _ = try connection.execute("ALTER PUBLICATION \(ident: publication.name) ADD TABLE \(ident: store, table)")
                }
            }
            return created
        }
        undo.added.append(("the publisher", publisher, [], created, plan.storeVersion))
        for (subscriber, names) in zip(subscribers, subscriptions) {
            do {
                try SubscriptionRefresh.learn(split.createdTables, by: names.map(\.subscription), store: store, policy: options.executionPolicy, on: subscriber.migrator.connection)
            } catch {
                throw ReplicatedApplyRefused(reason: "subscriber \(subscriber.name): \(error)")
            }
        }
        var restOptions = options
        restOptions.expectedPlan = nil
        return try publisher.applyHoldingLock(options: restOptions, planned: plan.publisherRemainder(split), onStep: onStep, onProgress: onProgress)
    }
}

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
