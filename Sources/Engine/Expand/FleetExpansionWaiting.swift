import Planning

/// `fleet apply --expand` of a store whose step is heavyweight: its expansion would wait for
/// `complete` (up to `--postpone-timeout`) holding one of the fleet's jobs, and the stores
/// behind it would not start until someone completed it. Refused for that store alone, before
/// anything changes; the message says how to expand it on its own.
public struct FleetExpansionWaiting: Error, CustomStringConvertible {
    public var store: String
    public var step: String

    public var description: String {
        "store \(store): step \(step) is heavyweight: its apply --expand waits for orchestrator complete, which a fleet run cannot do; "
            + "nothing was changed (expand it alone with apply --expand --store \(store) and complete it, or migrate the fleet with fleet apply --online)"
    }

    static func check(_ plan: MigrationPlan, options: ApplyOptions) throws {
        guard options.inFleet, options.expand, let step = plan.steps.first(where: { $0.staged?.newVersionViews != nil }) else { return }
        throw FleetExpansionWaiting(store: plan.store, step: "'\(step.from ?? "")' -> '\(step.to)'")
    }
}
