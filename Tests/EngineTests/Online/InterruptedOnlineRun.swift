import Foundation
import Testing
import ObjectModel
import PostgresClient
import SQLBuilding
@testable import Engine

extension GuardedWriter {
    /// `apply --online` while another session holds ROW EXCLUSIVE on the live store's
    /// `blocked` table, so the first phase that needs a stronger lock there stops the run (one
    /// retry): the writer writes before it, and after it while no run is active.
    func interruptedOnlineApply(
        _ model: VersionedModel, blocking blocked: String, allowDataLoss: Bool = false, on connection: PostgresConnection,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> StepFailure? {
        start()
        waitForCommits(5)
        let blocker = try PostgresConnection(url: url)
        defer { blocker.close() }
        try blocker.execute("BEGIN; LOCK TABLE \(ident: live, blocked) IN ROW EXCLUSIVE MODE")
        let failure = #expect(throws: StepFailure.self, sourceLocation: sourceLocation) {
            try StoreMigrator(connection: connection, model: model, store: live)
                .apply(options: ApplyOptions(lockTimeoutMilliseconds: 1000, lockRetries: 1, allowDataLoss: allowDataLoss, batchSize: 7, online: true))
        }
        try blocker.execute("ROLLBACK")
        let interrupted = commits
        waitForCommits(interrupted + 10)
        #expect(commits >= interrupted + 10, "the writer barely wrote while the step was unfinished", sourceLocation: sourceLocation)
        return failure
    }
}
