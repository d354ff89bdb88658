import Foundation
import TestSupport
@testable import Engine

/// The writer's waits on `apply`'s progress.
extension TwinWriter {
    /// For `apply`'s progress: before each phase of a lightweight step runs online (no
    /// migration transaction is open then), wait for one more write, so writes interleave
    /// with every phase however the machine schedules the writer's thread.
    func interleave(_ event: ProgressEvent) {
        if event.kind == .passStarted, event.stage == .online { waitForCommits(commits + 1) }
    }

    /// `interleave`, and, until the writer has committed `count` transactions since `before`,
    /// one more write before each batch too: the writes a test expects during the run are then
    /// made whatever the machine's load, not left to how it schedules the writer's thread
    /// against a run with fewer phases than that.
    func interleave(_ event: ProgressEvent, untilCommitted count: Int, since before: Int) {
        interleave(event)
        if event.kind == .rows, event.stage == .online, commits - before < count { waitForCommits(commits + 1) }
    }

    /// For a corpus run's progress, whose writes are often refused: before each online phase,
    /// wait for one more write tried, committed or not.
    func interleaveAttempt(_ event: ProgressEvent) {
        if event.kind == .passStarted, event.stage == .online { waitForAttempt() }
    }
}
