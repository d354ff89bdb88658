import Foundation
import Planning

/// Options of `apply` that do not change the plan.
public struct ApplyOptions: Sendable {
    /// `lock_timeout` of every migration transaction: readers and writers queued behind one of
    /// our lock requests wait at most this long per attempt.
    public var lockTimeoutMilliseconds: Int
    /// Attempts of a transaction that failed for a lock (55P03) or a deadlock (40P01), with
    /// backoff and jitter between.
    public var lockRetries: Int
    /// Steps that drop rows or values (hazard `dataLoss`) run only when true.
    public var allowDataLoss: Bool
    /// Discard the passes an interrupted heavyweight step left in its staging schema and start
    /// it over; without it, `apply` continues after the last checkpoint.
    public var restart: Bool
    /// Rows of the first batch (of an online phase, a streaming pass); all of them when
    /// `batchTimeMilliseconds` is nil.
    public var batchSize: Int
    /// `--batch-time`: each batch's size is adapted so that it takes about this long
    /// (`BatchSizing`); nil keeps every batch at `batchSize`.
    public var batchTimeMilliseconds: Int?
    /// `--pause-timeout`: the longest a run waits between batches while paused; it then stops,
    /// resumably (`BatchGate`).
    public var pauseTimeoutSeconds = Self.defaultPauseTimeoutSeconds
    /// `--postpone-switch-over`: each online step waits before its switch-over until
    /// `orchestrator control proceed` (`PostponedSwitchOver`), at most
    /// `postponeTimeoutSeconds`; it then stops, resumably.
    public var postponeSwitchOver = false
    public var postponeTimeoutSeconds = Self.defaultPostponeTimeoutSeconds
    /// The run's row for `status` (`RunRecord`), set by `apply` under the store's lock.
    var runRecord: RunRecord?
    /// Asked between batches after `orchestrator control` (`StoreControls`), which is always
    /// asked: the replica-lag throttle, a caller's own.
    public var betweenBatches: [any BetweenBatches] = []
    /// How long to wait for another `apply` of the same store to finish before giving up.
    public var lockWaitSeconds: Double
    /// `idle_in_transaction_session_timeout` of migration transactions: a stopped process's
    /// session ends and its locks go after this long. Streaming passes run policy code between
    /// statements, so it leaves room for a slow batch.
    public var idleInTransactionTimeoutMilliseconds: Int
    /// Run each step so that the application keeps reading and writing the store throughout
    /// (docs/online-migrations.md): a step kind that cannot run so is refused before anything
    /// changes, never run offline instead.
    public var online: Bool
    /// The mode the steps are planned for: `online`'s.
    public var planMode: PlanMode { expand ? .expand : online ? .online : .offline }
    /// `apply --expand` (with `online`): the one lightweight step's destructive changes are
    /// deferred to `complete`, and the old version is served through views (`ExpandPlanning`).
    public var expand = false
    /// Sessions a heavyweight step's set-based stage 1 passes may use at once (`--jobs`); nil:
    /// this machine's processors, at most `defaultJobsLimit` (PostgreSQL does not tell a
    /// client the server's).
    public var jobs: Int?
    /// A stage 1 pass with a split form (`SplitInsert`) runs in `jobs` parts at once from this
    /// many rows read (the catalog's estimate); below it, one INSERT costs less than the parts'
    /// extra transactions. Tests lower it.
    var splitRowsFrom = Self.defaultSplitRowsFrom
    /// Online heavyweight steps: catch-up rounds stop once at most this many logged writes are
    /// left for the last round, which runs under the write guard.
    var catchUpRemainder = 1000

    /// Migrate a store a subscription writes into without its publisher (`SubscriberAlone`).
    public var allowSubscriberAlone = false
    /// `apply --subscriber` of a step that drops published columns beside a change no order
    /// keeps fitting (`replicationUnorderedDrop`): run it with the subscriptions disabled
    /// around both sides' steps, the operator keeping writes out meanwhile.
    public var allowUnorderedDrop = false
    /// Run a step whose work tables a `FOR ALL TABLES` publication publishes
    /// (`replicationAllTables`, `AllTablesPublicationNotAllowed`).
    public var allowAllTablesPublication = false
    /// `apply --subscriber` on a subscriber: the swap leaves the subscriptions' records of the
    /// replaced tables alone, `SubscriptionRefresh` gives them the new ones once it has run.
    var refreshesSubscriptionsAfter = false
    /// `apply --subscriber` on the publisher: run once, the first time a heavyweight step's
    /// write guard holds the store's tables (`ReplicatedApply`, "the cut").
    var onWritesHeld: WritesHeld?
    /// A store of `fleet apply` (`StoreMigrator.applyUnderLock`): a heavyweight step's
    /// expansion, which waits for `complete`, is refused (`FleetExpansionWaiting`).
    var inFleet = false
    /// Tests: called with a split pass's number once its parts committed, before the pass's
    /// transaction (`ConcurrentPasses`); throwing stops the run there.
    var afterParts: (@Sendable (Int) throws -> Void)?
    /// Tests: the kinds of the planned heavyweight phases as they start (`HeavyweightPhasesRun`).
    var phasesRun: HeavyweightPhasesRun?
    /// `apply --plan`: the plan must be this one, planned again under the store's lock.
    public var expectedPlan: ExpectedPlan?
    /// Counts the transactions retried for a lock or a deadlock (`apply --dry-run`).
    public var lockWaits: LockWaitLog?

    public static let defaultLockTimeoutMilliseconds = 500
    public static let defaultLockRetries = 10
    public static let defaultLockWaitSeconds = 60.0
    public static let defaultBatchSize = 5000
    public static let defaultBatchTimeMilliseconds = 20
    public static let defaultPauseTimeoutSeconds = 3600.0
    public static let defaultPostponeTimeoutSeconds = 86_400.0
    public static let defaultIdleInTransactionTimeoutMilliseconds = 30_000
    public static let defaultJobsLimit = 4
    public static let defaultSplitRowsFrom = 50_000

    public init(
        lockTimeoutMilliseconds: Int = Self.defaultLockTimeoutMilliseconds, lockRetries: Int = Self.defaultLockRetries,
        allowDataLoss: Bool = false, restart: Bool = false, batchSize: Int = Self.defaultBatchSize,
        lockWaitSeconds: Double = Self.defaultLockWaitSeconds,
        idleInTransactionTimeoutMilliseconds: Int = Self.defaultIdleInTransactionTimeoutMilliseconds,
        online: Bool = false, jobs: Int? = nil
    ) {
        self.lockTimeoutMilliseconds = lockTimeoutMilliseconds
        self.lockRetries = lockRetries
        self.allowDataLoss = allowDataLoss
        self.restart = restart
        self.batchSize = batchSize
        self.lockWaitSeconds = lockWaitSeconds
        self.idleInTransactionTimeoutMilliseconds = idleInTransactionTimeoutMilliseconds
        self.online = online
        self.jobs = jobs
    }

    /// The sizes of the run's committed batches (an online backfill's), adapted to
    /// `batchTimeMilliseconds`.
    var batchSizing: BatchSizing {
        BatchSizing(start: batchSize, targetSeconds: batchTimeMilliseconds.map { Double($0) / 1000 })
    }

    /// The FETCH size of a streaming pass: `batchSize`, not adapted. The pass is one
    /// transaction whatever its batches, so a short batch shortens no wait; it only adds round
    /// trips to the Swift code's rows (11-20k rows/s: a time target would shrink it to the minimum).
    var streamingSizing: BatchSizing {
        BatchSizing(start: batchSize, targetSeconds: nil)
    }

    /// How every transaction of the run is executed.
    public var executionPolicy: ExecutionPolicy {
        ExecutionPolicy(
            lockTimeoutMilliseconds: lockTimeoutMilliseconds,
            idleInTransactionTimeoutMilliseconds: idleInTransactionTimeoutMilliseconds,
            retries: RetrySchedule(attempts: max(1, lockRetries)), lockWaits: lockWaits
        )
    }
}
