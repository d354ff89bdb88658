import Foundation
import Planning
import PostgresClient

extension StoreMigrator {
    /// A lightweight step under `apply --online`, or one an interrupted `apply --online` left
    /// half done (plain `apply` finishes it online rather than run offline statements over
    /// it); nil for every other step.
    func runOnline(
        _ step: PlannedStep, number: Int, of count: Int, plan: MigrationPlan, options: ApplyOptions, started: Date,
        onProgress: (ProgressEvent) -> Void = { _ in }
    ) throws -> AppliedStep? {
        guard step.kind == .lightweight else { return nil }
        let unfinished = try OnlineCheckpoint.unfinished(store: store, on: connection)
        guard options.online || unfinished != nil else { return nil }
        let failure = OnlineRun.Failure()
        do {
            let rows = try withoutActuallyEscaping(onProgress) { onProgress in
                try OnlineRun(migrator: self, step: step, plan: plan, options: options, number: number, count: count, onProgress: onProgress)
                    .run(started: started, failure: failure)
            }
            return AppliedStep(step: step, rows: rows, durationMilliseconds: milliseconds(since: started))
        } catch let error as OnlineStepUnfinished {
            throw error
        } catch {
            try? recordFailure(step, plan: plan, started: started, error: error)
            throw StepFailure(
                stepNumber: number, stepCount: count, step: step, statement: failure.statement,
                underlying: OnlineInterrupted(underlying: error)
            )
        }
    }
}

/// A phase of `apply --online` failed: the phases before it stay in the store, and the next
/// `apply` continues from it.
public struct OnlineInterrupted: Error, CustomStringConvertible {
    public var underlying: Error

    public var description: String {
        "\(underlying) (apply --online: the phases done stay in the store, the store's metadata stays at the step's source version; run apply again to continue)"
    }
}
