import Planning

/// What `apply` did.
public struct ApplyReport: Sendable {
    /// The plan as computed under the store's lock: the one that ran.
    public var plan: MigrationPlan
    public var appliedSteps: [AppliedStep]
    /// Cleanups after heavyweight swaps (this run's or earlier ones') left for a later run.
    public var deferredCleanups: [DeferredCleanup] = []
}

public struct AppliedStep: Sendable {
    public var step: PlannedStep
    public var rows: Int
    public var durationMilliseconds: Int
    /// A heavyweight step's cleanup after its swap, when it could not be done.
    public var deferredCleanup: DeferredCleanup?
}
