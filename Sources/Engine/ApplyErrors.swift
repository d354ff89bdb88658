import Planning
import PostgresClient

/// A step failed and rolled back; the store is left at the version the step started from.
public struct StepFailure: Error, CustomStringConvertible {
    public var stepNumber: Int
    public var stepCount: Int
    public var step: PlannedStep
    public var statement: PlannedStatement?
    public var underlying: Error
    /// A heavyweight step's staging schema, holding the passes that committed before the failure.
    public var partialWork: String?

    public var description: String {
        var text = "step \(stepNumber) of \(stepCount) (\(step.kind.rawValue) \(step.from.map { "'\($0)' -> " } ?? "")'\(step.to)') failed"
        if let statement { text += " at \"\(statement.summary)\"" }
        // Earlier steps of a chain have committed; this one rolled back.
        var state = step.from.map { "the store is at '\($0)'" } ?? "nothing was created"
        if let partialWork {
            state += "; the passes done are kept in schema \(partialWork): apply again continues after them, apply --restart starts over"
        }
        // The server's detail and hint say what to do next: a pre-check's hint names the fix.
        let diagnostics = (underlying as? PostgresError)?.diagnostics ?? []
        return ([text + ": \(underlying)"] + diagnostics + [state]).joined(separator: "; ")
    }
}

/// Plan blockers: the store needs a migration that cannot run.
public struct NotExecutable: Error, CustomStringConvertible {
    public var blockerDetails: [Blocker]

    public init(blockerDetails: [Blocker]) {
        self.blockerDetails = blockerDetails
    }

    /// The blockers' messages.
    public var blockers: [String] { blockerDetails.map(\.message) }
    public var description: String { blockers.joined(separator: "; ") }
}

/// The plan drops rows or values and `ApplyOptions.allowDataLoss` is false: nothing was changed.
public struct DataLossNotAllowed: Error, CustomStringConvertible {
    /// Each lossy step as "step n of m ('A' -> 'B')" with what it loses.
    public var losses: [String]

    public var description: String {
        "the migration loses data: \(losses.joined(separator: "; ")); nothing was changed (run again with --allow-data-loss to accept the loss)"
    }

    public static func check(_ plan: MigrationPlan, options: ApplyOptions) throws {
        guard !options.allowDataLoss else { return }
        var losses: [String] = []
        for (index, step) in plan.steps.enumerated() {
            let lost = step.hazards.filter(\.isDataLoss).map(\.message)
            guard !lost.isEmpty else { continue }
            let from = step.from.map { "'\($0)' -> " } ?? ""
            losses.append("step \(index + 1) of \(plan.steps.count) (\(from)'\(step.to)') \(lost.joined(separator: ", "))")
        }
        if !losses.isEmpty { throw DataLossNotAllowed(losses: losses) }
    }
}
