import Planning

/// `apply --online` met a step that cannot run while the application keeps writing: nothing
/// was changed. Such a step is refused, never run offline in its place.
public struct OnlineNotSupported: Error, CustomStringConvertible {
    /// Each refused step as "step n of m (kind 'A' -> 'B')" with why.
    public var refusals: [String]

    public var description: String {
        "apply --online cannot run \(refusals.joined(separator: "; ")); nothing was changed (run without --online to migrate with the store locked for the step's whole length)"
    }

    /// Why `step` cannot run online; nil when it can.
    public static func refusal(of step: PlannedStep) -> String? {
        switch step.kind {
        case .create:
            // A new store has no application writing to it yet.
            return nil
        case .lightweight:
            guard let online = step.online else { return "the step was planned without an online form" }
            return online.isSupported ? nil : online.refusals.joined(separator: "; ")
        case .heavyweight:
            return "heavyweight steps do not run online yet"
        }
    }

    static func check(_ plan: MigrationPlan, options: ApplyOptions) throws {
        guard options.online else { return }
        var refusals: [String] = []
        for (index, step) in plan.steps.enumerated() {
            guard let reason = refusal(of: step) else { continue }
            let from = step.from.map { "'\($0)' -> " } ?? ""
            refusals.append("step \(index + 1) of \(plan.steps.count) (\(step.kind.rawValue) \(from)'\(step.to)'): \(reason)")
        }
        if !refusals.isEmpty { throw OnlineNotSupported(refusals: refusals) }
    }
}
