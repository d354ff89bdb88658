import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// A step that runs as one transaction, in two round trips (`ExecutionPolicy.pipelinedTransaction`):
/// BEGIN, the timeouts, the step's statements and the store's metadata; then the history row,
/// which records the rows the statements changed, and COMMIT. The same statements in the same
/// order as one at a time, so the store, its metadata and its history are the same; a failure
/// anywhere rolls all of it back.
struct StepTransaction {
    var migrator: StoreMigrator
    var step: PlannedStep
    var plan: MigrationPlan
    var started: Date

    /// Runs the step; returns the rows its statements changed.
    func run(under policy: ExecutionPolicy) throws -> Int {
        var metadata = StepRecord(store: migrator.store, model: migrator.model, step: step, plan: plan).metadata()
        if step == plan.steps.last { metadata.append(StoreSchemas.finishingChain(store: migrator.store)) }
        var rows = 0
        _ = try policy.pipelinedTransaction(on: migrator.connection, step.statements.map(\.sql) + metadata) { results in
            rows = results.prefix(step.statements.count).reduce(0) { $0 + $1.affectedRows }
            return [migrator.history(step, plan: plan, rows: rows, started: started, outcome: "succeeded", error: nil)]
        }
        return rows
    }

    /// The planned statement a failure of the step's transaction names, if it is one of the step's.
    static func statement(of step: PlannedStep, failing error: Error) -> PlannedStatement? {
        guard let failed = (error as? PostgresError)?.statement else { return nil }
        return step.statements.first { $0.sql.text == failed }
    }
}
