import Planning

/// What `apply` did.
public struct ApplyReport: Sendable {
    /// The plan as computed under the store's lock: the one that ran.
    public var plan: MigrationPlan
    public var appliedSteps: [AppliedStep]
}

public struct AppliedStep: Sendable {
    public var step: PlannedStep
    public var rows: Int
    public var durationMilliseconds: Int
}
