import Foundation
import Planning
import PostgresClient

/// Running one step: a heavyweight step through `HeavyweightRun`, pass by pass; any other as one
/// transaction under the execution policy. A failure is recorded in the history and thrown as
/// `StepFailure`.
extension StoreMigrator {
    func run(
        _ step: PlannedStep, number: Int, of count: Int, plan: MigrationPlan, options: ApplyOptions,
        onProgress: (ProgressEvent) -> Void = { _ in }
    ) throws -> AppliedStep {
        let started = Date()
        if !step.passes.isEmpty {
            do {
                let (rows, deferred) = try withoutActuallyEscaping(onProgress) { onProgress in
                    try HeavyweightRun(migrator: self, step: step, number: number, count: count, options: options, onProgress: onProgress)
                        .run(plan: plan, started: started)
                }
                return AppliedStep(step: step, rows: rows, durationMilliseconds: milliseconds(since: started), deferredCleanup: deferred)
            } catch let error as StagingMismatch {
                throw error
            } catch let error as ForeignSchema {
                throw error
            } catch {
                try? recordFailure(step, plan: plan, started: started, error: error)
                var failure = StepFailure(
                    stepNumber: number, stepCount: count, step: step, statement: (error as? PassFailure)?.statement,
                    underlying: (error as? PassFailure)?.underlying ?? error
                )
                failure.partialWork = step.stagingSchema
                throw failure
            }
        }
        if let done = try runOnline(step, number: number, of: count, plan: plan, options: options, started: started, onProgress: onProgress) {
            return done
        }
        var failedStatement: PlannedStatement?
        do {
            let rows = try options.executionPolicy.transaction(on: connection) {
                var rows = 0
                for statement in step.statements {
                    failedStatement = statement
                    rows += try connection.execute(statement.sql).affectedRows
                }
                failedStatement = nil
                try record(step, plan: plan, rows: rows, started: started)
                return rows
            }
            return AppliedStep(step: step, rows: rows, durationMilliseconds: milliseconds(since: started))
        } catch {
            try? recordFailure(step, plan: plan, started: started, error: error)
            throw StepFailure(stepNumber: number, stepCount: count, step: step, statement: failedStatement, underlying: error)
        }
    }
}
