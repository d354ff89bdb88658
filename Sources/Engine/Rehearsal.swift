import Foundation
import Planning
import PostgresClient

/// Told who holds the store's lock while `apply` waits for it.
public typealias LockWaitHandler = ([AdvisoryLockHolder]) -> Void

/// Transactions that gave up for a lock (55P03) or a deadlock (40P01) and ran again, and the
/// time lost to them (the failed attempt and the backoff after it).
public final class LockWaitLog: @unchecked Sendable {
    public private(set) var count = 0
    public private(set) var seconds: Double = 0

    public init() {}

    func record(seconds: Double) {
        count += 1
        self.seconds += seconds
    }

    func reset() {
        count = 0
        seconds = 0
    }
}

/// What `apply --dry-run` found: each step as it ran, then rolled back.
public struct RehearsalReport: Sendable {
    /// The plan as computed under the store's lock: the one rehearsed.
    public var plan: MigrationPlan
    public var steps: [RehearsedStep]
    public var wouldSucceed: Bool { steps.allSatisfy { $0.outcome == .wouldSucceed } }
}

public struct RehearsedStep: Sendable {
    public enum Outcome: String, Sendable {
        case wouldSucceed, wouldFail, notReached
    }

    public var step: PlannedStep
    public var outcome: Outcome
    public var rows = 0
    public var durationMilliseconds = 0
    /// Transactions of the step retried for a lock or a deadlock, and the milliseconds lost.
    public var lockWaits = 0
    public var lockWaitMilliseconds = 0
    /// Why it would fail: the statement (its summary) and PostgreSQL's error.
    public var failedStatement: String?
    public var error: String?
}

extension StoreMigrator {
    /// `apply --dry-run`: the checks of `apply` (steps 1 and 3 of `apply`, the saved plan
    /// included), then, under the store's lock, in one transaction that is rolled back
    /// (`PostgresConnection.rehearsing`): the metadata bootstrap, the plan again, and each
    /// step exactly as `apply` runs it — pre-checks, heavyweight passes and swap, metadata and
    /// history. Its transactions become savepoints, and the write guard's lock is taken in this
    /// session. A step that fails is reported with its error; the steps after it are not
    /// reached. Nothing is left behind (what a crash left is not cleaned up either).
    public func rehearse(
        options: ApplyOptions = ApplyOptions(), onStep: (Int, Int, PlannedStep) -> Void = { _, _, _ in },
        onProgress: (ProgressEvent) -> Void = { _ in }, onLockWait: ([AdvisoryLockHolder]) -> Void = { _ in }
    ) throws -> RehearsalReport {
        let preliminary = try plan(mode: options.planMode, postponesSwitchOver: options.postponeSwitchOver, restart: options.restart)
        try options.expectedPlan?.requireSame(as: preliminary, migrator: self, online: options.online, expand: options.expand)
        if preliminary.isUpToDate { return RehearsalReport(plan: preliminary, steps: []) }
        guard preliminary.isExecutable else { throw NotExecutable(blockerDetails: preliminary.blockerDetails) }
        try DataLossNotAllowed.check(preliminary, options: options)
        let lock = StoreLock(store: store, connection: connection)
        try lock.acquire(waitingAtMost: options.lockWaitSeconds, onWait: onLockWait)
        defer { lock.release() }

        var options = options
        let lockWaits = LockWaitLog()
        options.lockWaits = lockWaits
        return try connection.rehearsing {
            try MetadataSchema.bootstrap(on: connection)
            let plan = try self.plan(mode: options.planMode, postponesSwitchOver: options.postponeSwitchOver, restart: options.restart)
            try options.expectedPlan?.requireSame(as: plan, migrator: self, online: options.online, expand: options.expand)
            guard plan.isExecutable else { throw NotExecutable(blockerDetails: plan.blockerDetails) }
            try DataLossNotAllowed.check(plan, options: options)
            var rehearsed: [RehearsedStep] = []
            for (index, step) in plan.steps.enumerated() {
                guard rehearsed.allSatisfy({ $0.outcome == .wouldSucceed }) else {
                    rehearsed.append(RehearsedStep(step: step, outcome: .notReached))
                    continue
                }
                onStep(index + 1, plan.steps.count, step)
                lockWaits.reset()
                let started = Date()
                var result = RehearsedStep(step: step, outcome: .wouldSucceed)
                do {
                    result.rows = try run(step, number: index + 1, of: plan.steps.count, plan: plan, options: options, onProgress: onProgress).rows
                } catch let failure as StepFailure {
                    result.outcome = .wouldFail
                    result.failedStatement = failure.statement?.summary
                    result.error = String(describing: failure.underlying)
                } catch {
                    result.outcome = .wouldFail
                    result.error = String(describing: error)
                }
                result.durationMilliseconds = milliseconds(since: started)
                result.lockWaits = lockWaits.count
                result.lockWaitMilliseconds = Int((lockWaits.seconds * 1000).rounded())
                rehearsed.append(result)
            }
            return RehearsalReport(plan: plan, steps: rehearsed)
        }
    }
}
