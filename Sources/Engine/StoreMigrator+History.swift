import Foundation
import JSONRendering
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

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
        let startedText = ISO8601DateFormatter.withFractionalSeconds.string(from: started)
        _ = try connection.execute(StepRecord(store: store, model: model, step: step, plan: plan).history(
            rows: "\(rows)", startedAt: "\(startedText)::timestamptz", durationMilliseconds: "\(milliseconds(since: started))",
            appliedBy: "current_user || ' (' || \(Self.operatingSystemUser) || ')'", outcome: outcome, error: error
        ))
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
