import Planning

/// `apply --online` met a step that cannot run while the application keeps writing: nothing
/// was changed. Such a step is refused, never run offline in its place.
public struct OnlineNotSupported: Error, CustomStringConvertible {
    /// Each refused step as "step n of m (kind 'A' -> 'B'): [code] why", codes as
    /// `OnlineRefusal.Code` (docs/cli-output.md).
    public var refusals: [String]

    public var description: String {
        "apply --online cannot run \(refusals.joined(separator: "; ")); nothing was changed (run without --online to migrate with the store locked for the step's whole length)"
    }

    /// Why `step` cannot run online; nil when it can. The codes are `step.onlineRefusals`'.
    public static func refusal(of step: PlannedStep) -> String? {
        let refusals = step.onlineRefusals
        return refusals.isEmpty ? nil : refusals.map(\.message).joined(separator: "; ")
    }

    /// A plan made for `apply --online` (`MigrationPlan.mode`) whose steps cannot all run so.
    static func check(_ plan: MigrationPlan) throws {
        guard plan.mode.runsOnline else { return }
        var refusals: [String] = []
        for (index, step) in plan.steps.enumerated() {
            let reasons = step.onlineRefusals
            guard !reasons.isEmpty else { continue }
            let from = step.from.map { "'\($0)' -> " } ?? ""
            let why = reasons.map { "[\($0.code.rawValue)] \($0.message)" }.joined(separator: "; ")
            refusals.append("step \(index + 1) of \(plan.steps.count) (\(step.kind.rawValue) \(from)'\(step.to)'): \(why)")
        }
        if !refusals.isEmpty { throw OnlineNotSupported(refusals: refusals) }
    }
}
