import Foundation
import Testing
import PostgresClient
import TestSupport
@testable import Engine

/// Issue 21: an online run's identity is the SHA-256 step digest; a checkpoint an earlier release
/// recorded under its FNV-1a digest still resumes, and one of another plan is still refused.
@Suite(integration) struct StepDigestUpgradeTests {
    typealias S = MigratedStore

    /// Runs the sparse items' step until its first batch has committed, then writes `digest`
    /// (nil: the plan's legacy one) into the checkpoint, as the previous release would have.
    static func interrupted(recording digest: String?, on connection: PostgresConnection) throws -> StoreMigrator {
        let migrator = StoreMigrator(connection: connection, model: try BatchRunnerTests.model(), store: S.store)
        var options = BatchRunnerTests.options()
        options.betweenBatches = [Answer(after: 5, decision: .stop(reason: "stopped by the test"))]
        _ = #expect(throws: StepFailure.self) { try migrator.apply(options: options) }
        let step = try #require(try migrator.plan().steps.first)
        let fnv = try #require(step.earlierDigests.last)
        #expect(step.digest.count == 64 && fnv.count == 16)
        let recorded = digest ?? fnv
        try connection.execute("UPDATE orchestrator.online_progress SET plan_digest = \(recorded) WHERE store = 'shop'")
        return migrator
    }

    @Test func aCheckpointRecordedUnderThePreviousReleasesDigestResumesAndIsRewritten() throws {
        try BatchRunnerTests.withSparseItems { _, connection in
            let migrator = try Self.interrupted(recording: nil, on: connection)
            #expect(try BatchRunnerTests.backfilled(on: connection) == 5)
            var events: [ProgressEvent] = []
            var options = BatchRunnerTests.options()
            options.betweenBatches = [Answer(after: 5, decision: .stop(reason: "stopped again"))]
            _ = #expect(throws: StepFailure.self) { try migrator.apply(options: options, onProgress: { events.append($0) }) }
            #expect(events.filter { $0.kind == .rows && $0.stage == .online }.map(\.rowsDone) == [5], "it continued after the first batch")
            let digest = try connection.execute("SELECT plan_digest FROM orchestrator.online_progress WHERE store = 'shop'").value(0, "plan_digest")
            #expect(digest == (try migrator.plan().steps.first?.digest))

            _ = try migrator.apply(options: BatchRunnerTests.options())
            #expect(try BatchRunnerTests.backfilled(on: connection) == 20)
            #expect(try S.version(on: connection) == "v2")
        }
    }

    @Test func aCheckpointOfAnotherPlanUnderAnFNVDigestIsRefusedWithNothingChanged() throws {
        try BatchRunnerTests.withSparseItems { _, connection in
            let migrator = try Self.interrupted(recording: "0123456789abcdef", on: connection)
            let refusal = try #require(throws: OnlineStepUnfinished.self) { try migrator.apply(options: BatchRunnerTests.options()) }
            #expect(refusal.description.contains("finish it first with apply --online --to 'v2' and the same models"), "\(refusal)")
            #expect(try BatchRunnerTests.backfilled(on: connection) == 5)
            #expect(try connection.execute("SELECT plan_digest FROM orchestrator.online_progress WHERE store = 'shop'").value(0, "plan_digest") == "0123456789abcdef")
        }
    }
}
