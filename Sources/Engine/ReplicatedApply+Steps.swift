import Foundation
import Planning
import PostgresClient

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
