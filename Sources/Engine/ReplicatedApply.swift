import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// `apply --subscriber`: a publisher's store and the same store on each subscriber, migrated
/// in the order that keeps replication flowing (docs/replication.md).
/// 1. Plan every side, changing nothing: each subscriber's store at the publisher's version
///    (or the publisher already at the target: a run to finish), written by a subscription
///    whose slot is on the publisher, its plan one that `apply` would run (no blocker, no
///    refusal: `StoreMigrator.requireRunnable`). A step whose own writes of published rows would reach
///    the subscribers beside the subscribers' own (`replicationDataWrites`) is refused.
/// 2. The cut (`WritesHeld`): wait until each subscription has applied everything the
///    publisher wrote so far, then disable it (what the publisher writes waits in the slot) and
///    wait for its worker to stop. When the first step is heavyweight, the cut comes once its
///    write guard holds the store's tables: rows written meanwhile in the old shape reach the
///    subscribers, still at the old version, before it; after it come only the new shape's.
///    Otherwise it comes before the publisher's step.
/// 3. Migrate the publisher; 4. each subscriber (a heavyweight step builds the new tables from
///    the subscriber's own rows).
/// 5. Enable the subscriptions and refresh them, so that they write into the new tables
///    (`SubscriptionRefresh`): what the publisher wrote meanwhile arrives in the new shape.
/// A failure in 3 enables the subscriptions again (nothing changed on either side); in 4 they
/// stay disabled, and the error says so.
public struct ReplicatedApply {
    public struct Subscriber {
        /// The subscriber's connection string, redacted.
        public var name: String
        public var migrator: StoreMigrator

        public init(name: String, migrator: StoreMigrator) {
            self.name = name
            self.migrator = migrator
        }
    }

    public var publisher: StoreMigrator
    public var subscribers: [Subscriber]
    /// The longest wait for a subscription to catch up, or for its worker to stop.
    public var waitSeconds: Double = 120
    /// Where `waitSeconds` is set, as errors name it.
    public var waitSetting = "--subscriber-wait"

    public init(publisher: StoreMigrator, subscribers: [Subscriber]) {
        self.publisher = publisher
        self.subscribers = subscribers
    }

    /// Steps 1 to 5 for a plan of one step (`apply` runs a plan of several one step at a time).
    func applyOneStep(
        options: ApplyOptions, onStep: (Int, Int, PlannedStep) -> Void, onProgress: (ProgressEvent) -> Void, onLockWait: ([AdvisoryLockHolder]) -> Void
    ) throws -> (publisher: ApplyReport, subscribers: [ApplyReport]) {
        let (subscriptions, cutsAtGuard, backfills) = try check(options)
        if backfills.contains(where: { $0 != nil }) {
            return try applyAround(backfills, subscriptions: subscriptions, options: options, onStep: onStep, onProgress: onProgress, onLockWait: onLockWait)
        }
        let cut = WritesHeld { [self] in
            try catchUp(subscriptions)
            for (subscriber, names) in zip(subscribers, subscriptions) { try setEnabled(false, names.map(\.subscription), on: subscriber) }
        }
        var publisherOptions = options
        let published: ApplyReport
        do {
            if cutsAtGuard {
                publisherOptions.onWritesHeld = cut
            } else {
                try cut.reached()
            }
            published = try publisher.apply(options: publisherOptions, onStep: onStep, onProgress: onProgress, onLockWait: onLockWait)
            // No write guard was taken (the publisher was at the target already): cut now.
            try cut.reached()
        } catch {
            for (subscriber, names) in zip(subscribers, subscriptions) { try? setEnabled(true, names.map(\.subscription), on: subscriber) }
            throw error
        }
        let subscriberOptions = Self.subscriberOptions(options)
        var reports: [ApplyReport] = []
        let store = publisher.store
        for (subscriber, names) in zip(subscribers, subscriptions) {
            do {
                reports.append(try subscriber.migrator.apply(options: subscriberOptions, onStep: onStep, onProgress: onProgress, onLockWait: onLockWait))
                try SubscriptionRefresh.enable(
                    names.map(\.subscription), store: store, policy: options.executionPolicy, on: subscriber.migrator.connection
                )
            } catch {
                throw SubscriberFailed(subscriber: subscriber.name, subscriptions: names.map(\.subscription), underlying: error)
            }
        }
        return (published, reports)
    }

    /// How each subscriber's store is migrated: with its publisher (its subscription's records
    /// refreshed after its step), by the plan made then.
    static func subscriberOptions(_ options: ApplyOptions) -> ApplyOptions {
        var subscriberOptions = options
        subscriberOptions.allowSubscriberAlone = true
        subscriberOptions.refreshesSubscriptionsAfter = true
        subscriberOptions.expectedPlan = nil
        // The operator's proceed (on the publisher) let the switch-over go: the subscribers follow.
        subscriberOptions.postponeSwitchOver = false
        return subscriberOptions
    }

    /// Step 1: each subscriber's subscriptions with their slots.
    private func check(_ options: ApplyOptions) throws -> (
        subscriptions: [[(subscription: String, slot: String)]], cutsAtGuard: Bool, backfills: [ReplicatedBackfill?]
    ) {
        let plan = try publisher.plan(mode: options.planMode, postponesSwitchOver: options.postponeSwitchOver)
        let store = publisher.store
        if let everything = plan.replication.publications.first(where: { $0.form == .allTables }) {
            throw ReplicatedApplyRefused(reason: "publication \(everything.name) is FOR ALL TABLES: it also publishes orchestrator's metadata and work tables, which each subscriber keeps for its own store; apply --subscriber needs FOR TABLE or FOR TABLES IN SCHEMA publications. Nothing was changed (docs/replication.md)")
        }
        if options.online, let step = plan.steps.enumerated().first(where: { $0.element.hazards.contains { $0.code == ReplicationHazards.workTables } }) {
            let message = step.element.hazards.first { $0.code == ReplicationHazards.workTables }!.message
            throw ReplicatedApplyRefused(reason: "step \(step.offset + 1) of \(plan.steps.count): \(message). Nothing was changed")
        }
        var all: [[(subscription: String, slot: String)]] = []
        var backfills: [ReplicatedBackfill?] = []
        for subscriber in subscribers {
            let theirs: MigrationPlan
            do {
                theirs = try subscriber.migrator.plan(mode: options.planMode, postponesSwitchOver: options.postponeSwitchOver)
            } catch {
                throw ReplicatedApplyRefused(reason: "subscriber \(subscriber.name) cannot be planned: \(error); nothing was changed on any side")
            }
            guard theirs.status != .missing else {
                throw ReplicatedApplyRefused(reason: "subscriber \(subscriber.name) has no store \(store); nothing was changed")
            }
            let same = theirs.storeVersion == plan.storeVersion || plan.isUpToDate
            guard same else {
                throw ReplicatedApplyRefused(reason: "subscriber \(subscriber.name): store \(store) is at '\(theirs.storeVersion ?? "?")', the publisher's at '\(plan.storeVersion ?? "?")'; nothing was changed (both sides must start from the same version)")
            }
            try requireRunnable(theirs, of: subscriber, options: options)
            guard theirs.replication.isSubscriptionTarget else {
                throw ReplicatedApplyRefused(reason: "subscriber \(subscriber.name): no subscription writes into store \(store); nothing was changed")
            }
            var slots: [(subscription: String, slot: String)] = []
            for subscription in theirs.replication.subscriptions {
                let slot = try subscriber.migrator.connection.execute("""
                    SELECT subslotname::text AS slot FROM pg_subscription WHERE subname = \(subscription.name)
                      AND subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """).value(0, "slot") ?? ""
                let onPublisher = try publisher.connection.execute("""
                    SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = \(slot) AND slot_type = 'logical' AND database = current_database()) AS yes
                    """).bool(0, "yes") == true
                guard onPublisher else {
                    throw ReplicatedApplyRefused(reason: "subscriber \(subscriber.name): subscription \(subscription.name) reads slot '\(slot)', which is not a slot of this publisher's database; nothing was changed")
                }
                slots.append((subscription.name, slot))
            }
            all.append(slots)
            backfills.append(try backfill(theirs, of: subscriber, publisher: plan, options: options))
        }
        return (all, plan.steps.first?.staged != nil, backfills)
    }

    /// A subscriber's step split around the publisher's (`ReplicatedBackfill`), when it writes
    /// rows the publisher publishes or drops a published column; the publisher's plan must then
    /// be that one step too, or nothing (an earlier run migrated it). `apply` runs a plan of
    /// several steps one step at a time (`ReplicatedApply+Steps`).
    private func backfill(_ theirs: MigrationPlan, of subscriber: Subscriber, publisher plan: MigrationPlan, options: ApplyOptions) throws -> ReplicatedBackfill? {
        // Read here: a plan already at its target (an earlier run migrated the publisher) has no topology.
        let published = try publishedTables()
        let steps = plan.isUpToDate ? theirs.steps : plan.steps
        guard let step = theirs.steps.first else { return nil }
        do {
            let split = try ReplicatedBackfill.split(step, published: published, schemaPublished: try schemaPublished(), options: options)
            guard split != nil, steps.count > 1 || theirs.steps.count > 1 else { return split }
            throw ReplicatedApplyRefused(reason: "(\(ReplicationHazards.dataWrites)): it writes published rows or drops published columns; apply --subscriber orders such a step only one step at a time. Nothing was changed (docs/replication.md)")
        } catch let refused as ReplicatedApplyRefused {
            throw ReplicatedApplyRefused(reason: "step 1 of \(steps.count) \(refused.reason)")
        }
    }

    /// A subscriber's step that `apply` would refuse is refused before the publisher changes:
    /// its store would be left behind the publisher's, its subscription disabled.
    private func requireRunnable(_ plan: MigrationPlan, of subscriber: Subscriber, options: ApplyOptions) throws {
        guard !plan.isUpToDate else { return }
        let blockers = plan.blockerDetails.map { "(\($0.code.rawValue)): \($0.message)" }
        guard blockers.isEmpty else {
            throw ReplicatedApplyRefused(reason: "subscriber \(subscriber.name) cannot migrate \(blockers.joined(separator: "; ")); nothing was changed on any side")
        }
        do {
            try subscriber.migrator.requireRunnable(plan, options: Self.subscriberOptions(options))
        } catch {
            throw ReplicatedApplyRefused(reason: "subscriber \(subscriber.name) cannot migrate: \(error); nothing was changed on any side")
        }
    }

    /// Step 2, first half: every slot confirmed up to the publisher's position now. A
    /// subscription already disabled (an earlier run's subscriber failed) has its changes
    /// waiting in its slot: nothing to wait for.
    private func catchUp(_ subscriptions: [[(subscription: String, slot: String)]]) throws {
        let position = try publisher.connection.execute("SELECT pg_current_wal_lsn()::text AS lsn").value(0, "lsn") ?? "0/0"
        for (subscriber, names) in zip(subscribers, subscriptions) {
            for name in names {
                let enabled = try subscriber.migrator.connection.execute("""
                    SELECT subenabled FROM pg_subscription WHERE subname = \(name.subscription)
                      AND subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                    """).bool(0, "subenabled")
                guard enabled == true else { continue }
                try wait("subscription \(name.subscription) of subscriber \(subscriber.name) to apply what the publisher wrote (slot \(name.slot) at \(position))") {
                    try publisher.connection.execute("""
                        SELECT coalesce(confirmed_flush_lsn >= \(position)::pg_lsn, false) AS yes FROM pg_replication_slots WHERE slot_name = \(name.slot)
                        """).bool(0, "yes") == true
                }
            }
        }
    }

    /// Disables (and waits for the workers to stop) or enables `subscriptions`.
    private func setEnabled(_ enabled: Bool, _ subscriptions: [String], on subscriber: Subscriber) throws {
        let connection = subscriber.migrator.connection
        for name in subscriptions {
            _ = try connection.execute("ALTER SUBSCRIPTION \(ident: name) \(unsafeRaw: enabled ? "ENABLE" : "DISABLE")")
            guard !enabled else { continue }
            try wait("the apply worker of subscription \(name) of subscriber \(subscriber.name) to stop") {
                try connection.execute("SELECT NOT EXISTS (SELECT 1 FROM pg_stat_subscription WHERE subname = \(name) AND pid IS NOT NULL) AS yes").bool(0, "yes") == true
            }
        }
    }

    func wait(_ what: String, then state: String = "nothing was changed", until done: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(waitSeconds)
        while try !done() {
            // A whole number of seconds as it was given ("3 s"), a fraction as it is ("1.5 s").
            let bound = waitSeconds.rounded() == waitSeconds ? "\(Int(waitSeconds))" : "\(waitSeconds)"
            guard Date() < deadline else { throw ReplicatedApplyRefused(reason: "waited \(bound) s (\(waitSetting)) for \(what); \(state)") }
            Thread.sleep(forTimeInterval: 0.2)
        }
    }
}

/// `apply --subscriber` cannot start: nothing was changed on any side.
public struct ReplicatedApplyRefused: Error, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

/// The publisher was migrated and a subscriber's step failed: its subscriptions stay disabled
/// (the publisher's changes, in the new shape, wait in their slots).
public struct SubscriberFailed: Error, CustomStringConvertible {
    public var subscriber: String
    public var subscriptions: [String]
    public var underlying: Error
    /// False when the subscriptions stayed enabled (`ReplicatedBackfill`'s order).
    public var subscriptionsDisabled = true

    public var description: String {
        guard subscriptionsDisabled else {
            return "the publisher was migrated, but subscriber \(subscriber) failed: \(underlying). Its subscription \(subscriptions.joined(separator: ", ")) stays enabled, "
                + "its store at its version with the step's new columns: fix the cause and run the same apply --subscriber again, which finishes the subscriber"
        }
        return "the publisher was migrated, but subscriber \(subscriber) failed: \(underlying). Its subscription \(subscriptions.joined(separator: ", ")) is left disabled, "
            + "the publisher's changes waiting in its slot: fix the cause and run the same apply --subscriber again, which migrates the subscriber and enables it"
    }
}

/// Runs its body once, the first time it is reached: `ReplicatedApply`'s cut, reached by the
/// publisher's first heavyweight write guard (`ApplyOptions.onWritesHeld`) or, without one,
/// around the publisher's step. A body that failed is not run again.
final class WritesHeld: @unchecked Sendable {
    private let body: () throws -> Void
    private var reachedOnce = false

    init(_ body: @escaping () throws -> Void) {
        self.body = body
    }

    func reached() throws {
        guard !reachedOnce else { return }
        reachedOnce = true
        try body()
    }
}
