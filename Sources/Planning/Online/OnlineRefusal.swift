/// Why a step cannot run under `apply --online`, with a stable code scripts can match on
/// (docs/cli-output.md, "Online refusal codes"), as blockers, hazards and inference refusals
/// have. The message names the change or the entity mapping.
public struct OnlineRefusal: Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Links copied into a join table whose owners' table is not known, so the copy's
        /// batches cannot walk them.
        case onlineUnsupportedLinkOwners
        /// Positions numbered across rows (an order column) whose owners' table is not known.
        case onlineUnsupportedPositionOwners
        /// A one-to-one's links moved into a column from anything but a to-one column.
        case onlineUnsupportedLinkSide
        /// A heavyweight entity mapping reads through a to-one kept in no column, whose changes
        /// cannot be traced to the rows reading it.
        case onlineUnsupportedUntracedPath
        /// The step carries no online form at all (a lightweight step without its online
        /// phases, a heavyweight one without its catch-up round).
        case onlineUnsupportedNotPlanned
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

extension PlannedStep {
    /// Why the step cannot run online, each with its code; empty when it can.
    public var onlineRefusals: [OnlineRefusal] {
        switch body {
        case .create:
            // A new store has no application writing to it yet.
            return []
        case .inPlace:
            return [OnlineRefusal(.onlineUnsupportedNotPlanned, "the step was planned without an online form")]
        case .phased(let plan):
            return plan.refusals
        case .staged(let work):
            // Catch-up rounds replay the rows written meanwhile (`OnlineCatchUp`).
            guard case .refused(let refusal) = work.catchUpForm else { return [] }
            return [refusal]
        }
    }
}
