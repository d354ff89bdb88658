import Engine
import JSONRendering
import ObjectModel
import Planning

/// `plan --online`: how `apply --online` runs each step, added to the plan's own output.
enum OnlinePlanRendering {
    static func text(_ plan: MigrationPlan) -> [String] {
        guard !plan.steps.isEmpty else { return [] }
        var lines = ["", "apply --online:"]
        for (index, step) in plan.steps.enumerated() {
            let from = step.from.map { "'\($0)' -> " } ?? ""
            let title = "step \(index + 1) of \(plan.steps.count) (\(step.kind.rawValue) \(from)'\(step.to)')"
            let refusals = step.onlineRefusals
            if !refusals.isEmpty {
                lines.append("  \(title): refused: " + refusals.map { "[\($0.code.rawValue)] \($0.message)" }.joined(separator: "; "))
            } else if step.kind == .heavyweight {
                let phases = step.staged?.shownPhases ?? []
                lines.append("  \(title): \(phases.count) phases")
                for (number, phase) in phases.enumerated() {
                    lines.append("    \(number + 1). \(phase.summary)")
                    lines.append("       \(phase.lock.rawValue), \(phase.holdText)")
                }
            } else if let online = step.phases {
                let waits = online.waitsToSwitchOver ? 1 : 0
                lines.append("  \(title): \(online.phases.count + waits) phases")
                for (number, phase) in online.phases.enumerated() {
                    if waits == 1 && number == online.phases.count - 1 {
                        lines.append("    \(number + 1). wait for orchestrator control proceed --store \(plan.store) (--postpone-switch-over), the triggers keeping both shapes in step meanwhile")
                        lines.append("       no lock of its own, at most --postpone-timeout, then the run stops and apply again continues; reads and writes go on")
                    }
                    lines.append("    \(number + 1 + (number == online.phases.count - 1 ? waits : 0)). \(phase.summary)")
                    lines.append("       \(phase.lock.rawValue), \(holdText(phase))")
                }
            } else {
                lines.append("  \(title): runs as planned (no application writes to it yet)")
            }
        }
        return lines
    }

    /// How long the phase holds its lock, and what waits meanwhile.
    static func holdText(_ phase: OnlinePhase) -> String {
        switch phase.hold {
        case .instant:
            "held for a catalog change (milliseconds; waits at most --lock-timeout, then retried)"
        case .batch:
            "one short transaction per batch (keyset batches sized to --batch-time); only the batch's rows wait"
        case .scan where phase.execution == .outsideTransaction:
            "outside a transaction, for a scan of the table; reads and writes go on"
        case .scan:
            blocksWrites(phase.lock) ? "held for a scan of the table; writes wait" : "held for a scan of the table; reads and writes go on"
        }
    }

    static func blocksWrites(_ lock: LockLevel) -> Bool {
        [.share, .shareRowExclusive, .accessExclusive].contains(lock)
    }

    /// The plan's JSON with, on each step, `online`: whether it runs online, why not, and its
    /// phases.
    static func json(_ plan: MigrationPlan) -> JSONValue {
        guard case .object(var fields) = PlanRendering.json(plan) else { return PlanRendering.json(plan) }
        fields = fields.map { name, value in
            guard name == "steps" else { return (name, value) }
            return (name, .array(plan.steps.map { step in
                guard case .object(var stepFields) = PlanRendering.stepJSON(step) else { return PlanRendering.stepJSON(step) }
                stepFields.append(("online", step.kind == .heavyweight ? heavyweightJSON(step) : stepJSON(step)))
                return .object(stepFields)
            }))
        }
        return .object(fields)
    }

    static func stepJSON(_ step: PlannedStep) -> JSONValue {
        let reason = OnlineNotSupported.refusal(of: step)
        let phases: [OnlinePhase] = reason == nil ? step.phases?.phases ?? [] : []
        return .object([
            ("supported", .bool(reason == nil)),
            ("refusal", reason.map(JSONValue.string) ?? .null),
            ("refusalCodes", refusalCodes(step)),
            ("waitsToSwitchOver", .bool(reason == nil && step.phases?.waitsToSwitchOver == true)),
            ("phases", .array(phases.map { phase in
                .object([
                    ("summary", .string(phase.summary)),
                    ("execution", .string(phase.execution.rawValue)),
                    ("lock", .string(phase.lock.rawValue)),
                    ("hold", .string(phase.hold.rawValue)),
                    ("blocksWrites", .bool(phase.hold != .batch && blocksWrites(phase.lock))),
                    ("statements", .array(phase.statements.map { .string($0.sql.text) })),
                    ("batchStatement", phase.batches.map { .string($0.template.text) } ?? .null),
                    ("index", phase.index.map(JSONValue.string) ?? .null),
                ])
            })),
        ])
    }

    /// The code of each of the step's refusals (`OnlineRefusal.Code`), in the order `refusal`
    /// joins their messages; empty when the step runs online.
    static func refusalCodes(_ step: PlannedStep) -> JSONValue {
        .array(step.onlineRefusals.map { .string($0.code.rawValue) })
    }

    /// A heavyweight step's `online` object: its phases in the same fields, `hold` as
    /// `instant` or `scan` and `holdText` saying what holds; no statements of their own.
    static func heavyweightJSON(_ step: PlannedStep) -> JSONValue {
        let reason = OnlineNotSupported.refusal(of: step)
        let phases = reason == nil ? step.staged?.shownPhases ?? [] : []
        return .object([
            ("supported", .bool(reason == nil)),
            ("refusal", reason.map(JSONValue.string) ?? .null),
            ("refusalCodes", refusalCodes(step)),
            ("phases", .array(phases.map { phase in
                .object([
                    ("summary", .string(phase.summary)), ("execution", .string(OnlinePhase.Execution.transaction.rawValue)),
                    ("lock", .string(phase.lock.rawValue)), ("hold", .string(phase.hold.rawValue)), ("holdText", .string(phase.holdText)),
                    ("blocksWrites", .bool(phase.blocksWrites)), ("statements", .array([])), ("batchStatement", .null), ("index", .null),
                ])
            })),
        ])
    }
}
