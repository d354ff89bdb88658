import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// `apply --subscriber` of a plan of several steps: one step at a time on every side, each in
/// its own order (`applyOneStep`: the backfill order for a lightweight step that writes
/// published rows or drops published columns, the cut for any other). Run together, the
/// subscribers would drop a later step's columns while rows written before the publisher's
/// step still waited in the slot with them: the subscription stops for good.
/// 1. The versions each step reaches: the longest plan's (a subscriber an earlier run left a
///    step behind has one more step than its publisher).
/// 2. Before anything changes, every step of every subscriber's plan is one `applyOneStep`
///    would run (`ReplicatedBackfill.split` refuses what no order keeps fitting).
/// 3. Each version in turn, publisher and subscribers, as `apply --to` it would.
extension ReplicatedApply {
    public func apply(
        options: ApplyOptions, onStep: (Int, Int, PlannedStep) -> Void = { _, _, _ in }, onProgress: (ProgressEvent) -> Void = { _ in },
        onLockWait: ([AdvisoryLockHolder]) -> Void = { _ in }
    ) throws -> (publisher: ApplyReport, subscribers: [ApplyReport]) {
        let plan = try publisher.plan(mode: options.planMode, postponesSwitchOver: options.postponeSwitchOver)
        // A subscriber that cannot be planned is refused, with the reason, by `applyOneStep`'s check.
        let theirs = subscribers.map { try? $0.migrator.plan(mode: options.planMode, postponesSwitchOver: options.postponeSwitchOver) }
        let longest = (theirs.compactMap { $0 } + [plan]).max { $0.steps.count < $1.steps.count } ?? plan
        let targets = longest.steps.map(\.to)
        guard targets.count > 1 else {
            return try applyOneStep(options: options, onStep: onStep, onProgress: onProgress, onLockWait: onLockWait)
        }
        try options.expectedPlan?.requireSame(as: plan, migrator: publisher, online: options.online)
        try requireOrderable(theirs, options: options)
        var publisherReport = ApplyReport(plan: plan, appliedSteps: [], deferredCleanups: [])
        var subscriberReports = theirs.map { ApplyReport(plan: $0 ?? plan, appliedSteps: [], deferredCleanups: []) }
        for (index, target) in targets.enumerated() {
            var round = self
            round.publisher.targetVersion = target
            for number in round.subscribers.indices { round.subscribers[number].migrator.targetVersion = target }
            var roundOptions = options
            roundOptions.expectedPlan = nil
            let reports: (publisher: ApplyReport, subscribers: [ApplyReport])
            do {
                reports = try round.applyOneStep(
                    options: roundOptions, onStep: { _, _, step in onStep(index + 1, targets.count, step) }, onProgress: onProgress, onLockWait: onLockWait
                )
            } catch let error where index > 0 {
                throw StepsPartlyApplied(applied: index, count: targets.count, version: targets[index - 1], underlying: error)
            }
            publisherReport.add(reports.publisher)
            for number in subscriberReports.indices { subscriberReports[number].add(reports.subscribers[number]) }
        }
        return (publisherReport, subscriberReports)
    }

    /// Step 2: each subscriber's steps split as their round will split them, so that a step no
    /// order keeps fitting stops the run before its first step changes anything.
    private func requireOrderable(_ plans: [MigrationPlan?], options: ApplyOptions) throws {
        let published = try publishedTables(), schema = try schemaPublished()
        for plan in plans.compactMap({ $0 }) {
            for (index, step) in plan.steps.enumerated() {
                do {
                    _ = try ReplicatedBackfill.split(step, published: published, schemaPublished: schema, options: options)
                } catch let refused as ReplicatedApplyRefused {
                    throw ReplicatedApplyRefused(reason: "step \(index + 1) of \(plan.steps.count) \(refused.reason)")
                }
            }
        }
    }

    /// The store's tables a publication of the publisher's database publishes.
    func publishedTables() throws -> Set<String> {
        Set(try publisher.connection.execute("""
            SELECT DISTINCT tablename::text AS t FROM pg_publication_tables WHERE schemaname = \(publisher.store)
            """).rows.compactMap { $0.first ?? nil })
    }

    /// A `FOR TABLES IN SCHEMA` publication of the publisher's database publishes the store:
    /// every table a step creates there is published too.
    func schemaPublished() throws -> Bool {
        try publisher.connection.execute("""
            SELECT EXISTS (SELECT 1 FROM pg_publication_namespace p JOIN pg_namespace n ON n.oid = p.pnnspid WHERE n.nspname = \(publisher.store)) AS yes
            """).bool(0, "yes") == true
    }
}

extension ApplyReport {
    /// `other`'s steps (a later step of the same plan) after this report's.
    mutating func add(_ other: ApplyReport) {
        appliedSteps += other.appliedSteps
        deferredCleanups += other.deferredCleanups
    }
}

/// `apply --subscriber` of several steps stopped after the first `applied` steps reached every
/// side (`version`): what failed, and where the stores are.
public struct StepsPartlyApplied: Error, CustomStringConvertible {
    public var applied: Int
    public var count: Int
    public var version: String
    public var underlying: Error

    public var description: String {
        "the first \(applied) of \(count) steps reached the publisher and every subscriber ('\(version)'); step \(applied + 1): \(underlying)"
    }
}

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
        // The plan's statements are the ones made at the start, but the publications are read
        // again: one altered or dropped meanwhile no longer publishes the new tables.
        guard let split = SubscriberSplit(plan.steps[0], published: published, schemaPublished: try schemaPublished()), split.publishesCreated else {
            throw ReplicatedApplyRefused(reason: "store \(store)'s publications changed while apply --subscriber ran: they no longer publish the tables the step creates; nothing was changed at the publisher")
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
