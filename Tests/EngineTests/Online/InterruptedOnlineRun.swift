import Foundation
import Testing
import ObjectModel
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// How a test stops `apply --online`: another session (the blocker) takes a lock that a phase
/// then waits for in vain.
enum OnlineInterruption {
    /// ROW EXCLUSIVE on the live store's table, held from before the run: the first phase
    /// that needs a stronger lock there stops it.
    case lockedBeforeTheRun(String)
    /// Each progress event, after the writer's `interleave`, goes to the closure with the
    /// blocker, which takes its lock when the run reaches the phase meant.
    case atProgress((_ blocker: PostgresConnection, ProgressEvent) -> Void)
}

extension TwinWriter {
    /// Starts the writer and, after its first writes, runs `apply --online` (batches of 7, one
    /// retry of a lock wait) until `interruption` stops it; expects it to fail with a
    /// `StepFailure`, which it returns, the blocker's lock released. A lock wait gives up after
    /// 2 s: long enough that the concurrent writer's row locks on a loaded machine do not stop
    /// the run before the point the test means (1 s did, now and then, at load 15). The retry
    /// is `lockRetries: 2` (the option counts attempts, not retries): with one attempt, a
    /// deadlock with the writer (detected after `deadlock_timeout`, 1 s, before the 2 s lock
    /// wait runs out) or one long wait stopped the run at whatever phase met it; the blocker
    /// holds its lock through the backoff, so the phase meant fails both attempts.
    func interruptedOnlineApply(
        _ model: VersionedModel, _ interruption: OnlineInterruption, lockTimeoutMilliseconds: Int = 2000, allowDataLoss: Bool = false,
        on connection: PostgresConnection, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> StepFailure? {
        start()
        waitForCommits(5)
        let blocker = try newSession()
        defer { blocker.close() }
        let options = ApplyOptions(lockTimeoutMilliseconds: lockTimeoutMilliseconds, lockRetries: 2, allowDataLoss: allowDataLoss, batchSize: 7, online: true)
        let migrator = StoreMigrator(connection: connection, model: model, store: live)
        if case .lockedBeforeTheRun(let table) = interruption {
            try blocker.execute("BEGIN; LOCK TABLE \(ident: live, table) IN ROW EXCLUSIVE MODE")
        }
        let failure = #expect(throws: StepFailure.self, sourceLocation: sourceLocation) {
            try migrator.apply(options: options, onProgress: { event in
                guard case .atProgress(let interrupt) = interruption else { return }
                interleave(event)
                interrupt(blocker, event)
            })
        }
        try blocker.execute("ROLLBACK")
        return failure
    }

    /// `apply --online` while another session holds ROW EXCLUSIVE on the live store's
    /// `blocked` table, so the first phase that needs a stronger lock there stops the run (one
    /// retry): the writer writes before it, and after it while no run is active.
    func interruptedOnlineApply(
        _ model: VersionedModel, blocking blocked: String, allowDataLoss: Bool = false, on connection: PostgresConnection,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> StepFailure? {
        let failure = try interruptedOnlineApply(model, .lockedBeforeTheRun(blocked), allowDataLoss: allowDataLoss, on: connection, sourceLocation: sourceLocation)
        expectWritesWhileUnfinished(sourceLocation: sourceLocation)
        return failure
    }

    /// After an interrupted run: waits for ten more writes, made while no run is active (the
    /// triggers left behind keep them right), and expects them.
    func expectWritesWhileUnfinished(sourceLocation: SourceLocation = #_sourceLocation) {
        let interrupted = commits
        waitForCommits(interrupted + 10)
        #expect(commits >= interrupted + 10, "the writer barely wrote while the step was unfinished", sourceLocation: sourceLocation)
    }
}
