import Foundation
import Planning
import PostgresClient
import JSONRendering
import ObjectModel
import SQLBuilding

/// Running one step, by its body: a heavyweight step through `HeavyweightRun`, a phased one
/// through `OnlineRun` (both build phases that `StepRunner` runs); any other as one transaction
/// under the execution policy. A failure is recorded in the history and thrown as `StepFailure`.
extension StoreMigrator {
    func run(
        _ step: PlannedStep, number: Int, of count: Int, plan: MigrationPlan, options: ApplyOptions,
        onProgress: (ProgressEvent) -> Void = { _ in }
    ) throws -> AppliedStep {
        let started = Date()
        switch step.body {
        case .staged(let work):
            do {
                let (rows, deferred) = try withoutActuallyEscaping(onProgress) { onProgress in
                    try HeavyweightRun(migrator: self, step: step, work: work, number: number, count: count, options: options, onProgress: onProgress)
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
                // Said only while the staging schema is there: a `rollback --force` that ended
                // this run has dropped it, and then nothing continues.
                failure.partialWork = stagingSurvives(work.stagingSchema) ? work.stagingSchema : nil
                throw failure
            }
        case .phased:
            return try runOnline(step, number: number, of: count, plan: plan, options: options, started: started, onProgress: onProgress)
        case .create, .inPlace:
            return try runInOneTransaction(step, number: number, of: count, plan: plan, options: options, started: started)
        }
    }

    /// Whether `schema` is still there and no `rollback --force` is dropping it (its session,
    /// named by `ExpansionRollback.applicationName`, ended this run), read on this connection
    /// or, when the failure ended it, on a new one; true when neither can tell (the message
    /// then says what it always said).
    private func stagingSurvives(_ schema: String) -> Bool {
        let query: SQL = """
            SELECT count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = \(ExpansionRollback.applicationName(store: store)))) AS n
            FROM pg_namespace WHERE nspname = \(schema)
            """
        if let result = try? connection.execute(query) { return result.int(0, "n") != 0 }
        guard let fresh = try? connection.reconnect() else { return true }
        defer { fresh.close() }
        return (try? fresh.execute(query)).map { $0.int(0, "n") != 0 } ?? true
    }

    /// A new store or a lightweight step run in place: its statements, metadata and history in
    /// one transaction under the execution policy.
    private func runInOneTransaction(_ step: PlannedStep, number: Int, of count: Int, plan: MigrationPlan, options: ApplyOptions, started: Date) throws -> AppliedStep {
        var failedStatement: PlannedStatement?
        do {
            let rows = connection.isRehearsing
                ? try options.executionPolicy.transaction(on: connection) {
                    var rows = 0
                    for statement in step.statements {
                        failedStatement = statement
                        rows += try connection.execute(statement.sql).affectedRows
                    }
                    failedStatement = nil
                    try record(step, plan: plan, rows: rows, started: started)
                    return rows
                }
                : try StepTransaction(migrator: self, step: step, plan: plan, started: started).run(under: options.executionPolicy)
            return AppliedStep(step: step, rows: rows, durationMilliseconds: milliseconds(since: started))
        } catch {
            try? recordFailure(step, plan: plan, started: started, error: error)
            failedStatement = failedStatement ?? StepTransaction.statement(of: step, failing: error)
            throw StepFailure(stepNumber: number, stepCount: count, step: step, statement: failedStatement, underlying: error)
        }
    }
}

/// What a step leaves in the metadata schema: the store's version and hashes, the version's
/// definition, and a row of history for each step that ran, succeeded or failed.
extension StoreMigrator {
    /// Metadata and history, in the step's transaction.
    func record(_ step: PlannedStep, plan: MigrationPlan, rows: Int, started: Date) throws {
        for statement in StepRecord(store: store, model: model, step: step, plan: plan).metadata() {
            _ = try connection.execute(statement)
        }
        try insertHistory(step, plan: plan, rows: rows, started: started, outcome: "succeeded", error: nil)
        if step == plan.steps.last { try StoreSchemas.finishChain(store: store, on: connection) }
    }

    func recordFailure(_ step: PlannedStep, plan: MigrationPlan, started: Date, error: Error) throws {
        try insertHistory(step, plan: plan, rows: 0, started: started, outcome: "failed", error: String(describing: error))
    }

    func insertHistory(_ step: PlannedStep, plan: MigrationPlan, rows: Int, started: Date, outcome: String, error: String?) throws {
        _ = try connection.execute(history(step, plan: plan, rows: rows, started: started, outcome: outcome, error: error))
    }

    func history(_ step: PlannedStep, plan: MigrationPlan, rows: Int, started: Date, outcome: String, error: String?) -> SQL {
        let startedText = ISO8601DateFormatter.withFractionalSeconds.string(from: started)
        return StepRecord(store: store, model: model, step: step, plan: plan).history(
            rows: "\(rows)", startedAt: "\(startedText)::timestamptz", durationMilliseconds: "\(milliseconds(since: started))",
            appliedBy: "current_user || ' (' || \(Self.operatingSystemUser) || ')'", outcome: outcome, error: error
        )
    }

    static var operatingSystemUser: String {
        let environment = ProcessInfo.processInfo.environment
        let user = environment["USER"] ?? environment["LOGNAME"] ?? "unknown"
        return "\(user)@\(ProcessInfo.processInfo.hostName)"
    }
}

func milliseconds(since start: Date) -> Int {
    Int((Date().timeIntervalSince(start) * 1000).rounded())
}

extension ISO8601DateFormatter {
    nonisolated(unsafe) static let withFractionalSeconds: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
}

extension StoreMigrator {
    /// A lightweight step planned in phases: under `apply --online`, or the one an interrupted
    /// `apply --online` left half done (plain `apply` finishes it online rather than run
    /// offline statements over it).
    func runOnline(
        _ step: PlannedStep, number: Int, of count: Int, plan: MigrationPlan, options: ApplyOptions, started: Date,
        onProgress: (ProgressEvent) -> Void = { _ in }
    ) throws -> AppliedStep {
        let failure = StepRunner.Failure()
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
