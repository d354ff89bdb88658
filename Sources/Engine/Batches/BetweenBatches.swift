import Foundation
import PostgresClient

/// What a run does after a committed batch (docs/online-migrations.md, "Pausing and slowing
/// a run").
public enum BatchDecision: Sendable, Equatable {
    /// Go on with the next batch.
    case proceed
    /// Go on after sleeping this many seconds (a replica catching up, a busy server).
    case slow(seconds: Double)
    /// Wait, and ask again, until the decision changes or the run's pause timeout is reached;
    /// the run then stops as with `stop`. `reason` is shown in the run's progress.
    case pause(reason: String)
    /// Stop now: the batch's checkpoint has committed, and the next `apply` continues from it.
    case stop(reason: String)
}

/// Where a run is when it asks: the store, and the rows of the unit of work (a phase, a pass,
/// the catch-up rounds) done so far.
public struct BatchPosition: Sendable, Equatable {
    public var store: String
    public var rowsDone: Int
    /// True when the run holds the heavyweight write guard: the application's writes wait
    /// while the run waits, so a pause stops the run at once (resumable) instead.
    public var holdsWrites: Bool
    /// True between two FETCH batches of a streaming pass, inside the pass's transaction (the
    /// hook's connection is then in it): a stop rolls the pass back to the last checkpoint.
    public var isInsidePass = false
}

/// Asked between every two batches of a run, after the first batch's transaction committed
/// and before the next begins, and between two FETCH batches of a streaming pass, inside the
/// pass's transaction (`BatchPosition.isInsidePass`). `connection` is the run's own: a hook
/// may read from it, must leave no transaction open and must not end the pass's.
public protocol BetweenBatches: Sendable {
    func decide(at position: BatchPosition, on connection: PostgresConnection) throws -> BatchDecision
}

/// A run stopped between batches, its last checkpoint committed: apply again continues.
public struct RunStopped: Error, CustomStringConvertible {
    public var store: String
    public var reason: String
    /// Stopped inside a streaming pass, whose transaction rolled back.
    public var isInsidePass = false

    public var description: String {
        if isInsidePass {
            return "store \(store): stopped inside a streaming pass: \(reason); the pass was rolled back, the passes before it are checkpointed, and apply again continues from the last checkpoint"
        }
        return "store \(store): stopped between batches: \(reason); the work done is checkpointed, and apply again continues from it"
    }
}
