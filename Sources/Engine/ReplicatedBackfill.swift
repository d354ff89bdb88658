import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// `apply --subscriber` of a lightweight step whose own statements write rows of published
/// tables (`replicationDataWrites`: a backfill), or that drops published columns. Those writes replicate, so each subscriber takes
/// them from its subscription, which stays enabled throughout, instead of writing them itself
/// (which would double them). Planning splits the step from the changes that planned it
/// (`SubscriberSplit(step, published:)`); on each subscriber:
/// 1. `additive`: the columns the step adds, added first, in a transaction of their own (the
///    store stays at its version; rows in the old shape still fit);
/// 2. the publisher runs its step: its backfill replicates into the columns the subscribers have;
/// 3. each subscription applies everything up to the publisher's position after its commit
///    (bounded by `ReplicatedApply.waitSeconds`);
/// 4. `SubscriberSplit.remaining`: the step without its replicated writes and without what
///    step 1 added (drops, NOT NULL, defaults), with the store's metadata at the new version.
/// A subscriber never drops a column before the publisher stops sending it (step 2 is done and
/// applied first). A statement no order keeps fitting refuses the step (`split`).
struct ReplicatedBackfill {
    /// The subscriber's step split by Planning (its `remaining` is step 4).
    var split: SubscriberSplit
    var additive: [PlannedStatement] { split.addedFirst }
    /// The columns `additive` adds, one for each of its statements.
    var addedColumns: [AddedColumn] { split.addedColumns }

    /// `step`'s split, `published` naming the store's tables the publisher publishes; nil when
    /// the step writes no published row and drops no published column, or is not lightweight.
    /// Under `apply --online` a step that only drops published columns (and adds some, or
    /// creates tables the publisher creates first and fills) runs online on the publisher, its
    /// additive part and its remainder in place on each subscriber; one writing other published
    /// rows is refused there (`replicationDataWrites`).
    /// Throws `ReplicatedApplyRefused` for a statement no order keeps fitting
    /// (`SubscriberPart.unorderable`: a rename, a column's type changed, a table dropped) beside a write of published rows (`replicationDataWrites`), or beside a drop of
    /// a published column (`replicationUnorderedDrop`) unless `allowUnorderedDrop`: such a step
    /// then goes `ReplicatedApply`'s way, the subscriptions disabled around both sides' steps.
    static func split(_ step: PlannedStep, published: Set<String>, schemaPublished: Bool = false, options: ApplyOptions) throws -> ReplicatedBackfill? {
        guard step.kind == .lightweight, let split = SubscriberSplit(step, published: published, schemaPublished: schemaPublished) else { return nil }
        if let unordered = split.unorderable {
            let also = "\(unordered.summary) (\(unordered.sql.text))"
            guard split.replicated.isEmpty else {
                throw ReplicatedApplyRefused(reason: "(\(ReplicationHazards.dataWrites)) the step writes published rows, which replicate, and also \(also): "
                    + "no order of the publisher's and the subscribers' parts keeps replication flowing (a rename, a column's type changed, a table dropped); apply --subscriber refuses it. "
                    + "Run the step as two versions (the backfill in one, the rest in the next). Nothing was changed (docs/replication.md)")
            }
            guard options.allowUnorderedDrop else {
                throw ReplicatedApplyRefused(reason: "(\(ReplicationHazards.unorderedDrop)) the step drops published columns and also \(also): "
                    + "no order keeps rows the application writes at the publisher during the step fitting (the subscriptions are disabled around both sides' steps, "
                    + "and a row written in the old shape meanwhile stops the subscription for good). Run the drop as a version of its own, "
                    + "or keep writes to the store's tables out during the step and give --allow-unordered-drop. Nothing was changed (docs/replication.md)")
            }
            return nil
        }
        // Online, only the rows of tables the publisher creates first may replicate (a to-one made to-many): proven with rows.
        guard !options.online || Set(split.replicatedTables).isSubset(of: split.publishesCreated ? split.createdTables : []) else {
            throw ReplicatedApplyRefused(reason: "(\(ReplicationHazards.dataWrites)) the step writes published rows, which replicate: apply --subscriber runs such a step only offline, as one transaction (not --online). Nothing was changed (docs/replication.md)")
        }
        return ReplicatedBackfill(split: split)
    }

    /// Step 1 on one subscriber: the step's new tables (bare), then its new columns; returns
    /// those this run added. One there already (an earlier run that stopped after this step)
    /// is kept: the statement's savepoint is rolled back, the rest goes on, and it is not this
    /// run's to take back.
    func addFirst(on migrator: StoreMigrator, policy: ExecutionPolicy) throws -> (columns: [AddedColumn], tables: [String]) {
        guard !additive.isEmpty || !split.createdFirst.isEmpty else { return ([], []) }
        let connection = migrator.connection
        return try policy.transaction(on: connection) {
            let tables = try Self.runKeepingExisting(zip(split.createdFirst, split.createdTables).map { $0 }, on: connection)
            let columns = try Self.runKeepingExisting(zip(additive, addedColumns).map { $0 }, on: connection)
            return (columns, tables)
        }
    }

    /// Each statement under a savepoint; one whose column or table is there already
    /// (`duplicate_column`, `duplicate_table`) is rolled back and left out of what is returned.
    static func runKeepingExisting<Added>(_ statements: [(PlannedStatement, Added)], on connection: PostgresConnection) throws -> [Added] {
        var added: [Added] = []
        for (statement, what) in statements {
            _ = try connection.execute("SAVEPOINT added_first")
            do {
                _ = try connection.execute(statement.sql)
                added.append(what)
            } catch let error as PostgresError where error.sqlState == "42701" || error.sqlState == "42P07" {
                _ = try connection.execute("ROLLBACK TO SAVEPOINT added_first")
            }
        }
        return added
    }
}

extension ReplicatedBackfill {
    /// Step 4 on a subscriber: under the store's lock, planned again (the plan must still be
    /// `planned`'s), Planning's remainder of it run (`MigrationPlan.subscriberRemainder`), with
    /// its metadata and history, as `apply` runs a step.
    func applyRest(on migrator: StoreMigrator, of planned: MigrationPlan, options: ApplyOptions) throws -> ApplyReport {
        let connection = migrator.connection, store = migrator.store
        try MetadataSchema.bootstrap(on: connection)
        let lock = StoreLock(store: store, connection: connection)
        try lock.acquire(waitingAtMost: options.lockWaitSeconds, onWait: { _ in })
        defer { lock.release() }
        let plan = try migrator.plan(mode: options.planMode, postponesSwitchOver: options.postponeSwitchOver)
        if plan.isUpToDate { return ApplyReport(plan: plan, appliedSteps: [], deferredCleanups: []) }
        guard plan.steps.map(\.statements) == planned.steps.map(\.statements), plan.steps.count == 1 else {
            throw ReplicatedApplyRefused(reason: "store \(store) was changed by someone else while apply --subscriber ran (its plan is not the one made at the start)")
        }
        let remainder = plan.subscriberRemainder(split)
        let done = try migrator.run(remainder.steps[0], number: 1, of: 1, plan: remainder, options: options)
        return ApplyReport(plan: remainder, appliedSteps: [done], deferredCleanups: [])
    }
}

extension ReplicatedApply {
    /// `ReplicatedBackfill`'s order, the subscriptions enabled throughout. A failure before the
    /// publisher's step commits leaves every side at its version, the columns this run added on
    /// the subscribers dropped again while still empty (`AddedColumnsUndo`); after it, the error
    /// names the subscriber, and the same `apply --subscriber` again finishes it.
    func applyAround(
        _ backfills: [ReplicatedBackfill?], subscriptions: [[(subscription: String, slot: String)]], options: ApplyOptions,
        onStep: (Int, Int, PlannedStep) -> Void, onProgress: (ProgressEvent) -> Void, onLockWait: ([AdvisoryLockHolder]) -> Void
    ) throws -> (publisher: ApplyReport, subscribers: [ApplyReport]) {
        let subscriberOptions = Self.subscriberOptions(options)
        // A publisher's step that `apply` would refuse stops the run before any subscriber changes.
        let theirs = try publisher.plan(mode: options.planMode, postponesSwitchOver: options.postponeSwitchOver)
        if !theirs.isUpToDate {
            try publisher.requireRunnable(theirs, options: options)
        }
        var planned: [MigrationPlan?] = []
        var undo = AddedColumnsUndo()
        for (subscriber, backfill) in zip(subscribers, backfills) {
            let plan = backfill == nil ? nil : try subscriber.migrator.plan(mode: options.planMode, postponesSwitchOver: options.postponeSwitchOver)
            planned.append(plan)
            do {
                let added = try backfill?.addFirst(on: subscriber.migrator, policy: options.executionPolicy) ?? (columns: [], tables: [])
                undo.added.append(("subscriber \(subscriber.name)", subscriber.migrator, added.columns, added.tables, plan?.storeVersion))
            } catch {
                let undone = undo.undo(store: publisher.store, policy: options.executionPolicy)
                throw ReplicatedApplyRefused(reason: "subscriber \(subscriber.name) could not add the step's new columns first: \(error); nothing was changed on the publisher" + (undone.isEmpty ? "" : "; \(undone)"))
            }
        }
        let published: ApplyReport
        do {
            if backfills.contains(where: { $0?.split.publishesCreated == true }), !theirs.isUpToDate {
                published = try applyCreatingFirst(theirs, subscriptions: subscriptions, undo: &undo, options: options, onStep: onStep, onProgress: onProgress, onLockWait: onLockWait)
            } else {
                published = try publisher.apply(options: options, onStep: onStep, onProgress: onProgress, onLockWait: onLockWait)
            }
        } catch {
            guard undo.added.contains(where: { !$0.columns.isEmpty || !$0.tables.isEmpty }) else { throw error }
            // Taken back only while the publisher is still at its version: once its step committed, it sends them.
            let now = try? publisher.connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = \(publisher.store)").value(0, "version_name")
            guard let now, now == theirs.storeVersion else {
                throw PublisherStepFailed(underlying: error, undone: "the subscribers keep the step's new columns and tables (the publisher's version could not be confirmed as '\(theirs.storeVersion ?? "?")'); the same apply --subscriber again uses them")
            }
            throw PublisherStepFailed(underlying: error, undone: undo.undo(store: publisher.store, policy: options.executionPolicy))
        }
        let position = try publisher.connection.execute("SELECT pg_current_wal_lsn()::text AS lsn").value(0, "lsn") ?? "0/0"
        var reports: [ApplyReport] = []
        for ((subscriber, names), (backfill, plan)) in zip(zip(subscribers, subscriptions), zip(backfills, planned)) {
            do {
                guard let backfill, let plan else {
                    reports.append(try subscriber.migrator.apply(options: subscriberOptions, onStep: onStep, onProgress: onProgress, onLockWait: onLockWait))
                    continue
                }
                for name in names {
                    let what = "subscription \(name.subscription) of subscriber \(subscriber.name) to apply the publisher's step (slot \(name.slot) confirmed up to \(position), "
                        + "after the step's commit) before the subscriber drops or tightens anything"
                    let state = "the publisher is migrated; subscriber \(subscriber.name) is still at its version, with the step's new columns, its subscription as it was "
                        + "(what the publisher wrote waits in the slot): once the subscription streams again, run the same apply --subscriber, which finishes it"
                    try wait(what, then: state) {
                        try publisher.connection.execute("""
                            SELECT coalesce(confirmed_flush_lsn >= \(position)::pg_lsn, false) AS yes FROM pg_replication_slots WHERE slot_name = \(name.slot)
                            """).bool(0, "yes") == true
                    }
                }
                onStep(1, 1, plan.steps[0])
                reports.append(try backfill.applyRest(on: subscriber.migrator, of: plan, options: subscriberOptions))
            } catch let error as ReplicatedApplyRefused {
                throw error
            } catch {
                var failed = SubscriberFailed(subscriber: subscriber.name, subscriptions: names.map(\.subscription), underlying: error)
                failed.subscriptionsDisabled = false
                throw failed
            }
        }
        return (published, reports)
    }
}
