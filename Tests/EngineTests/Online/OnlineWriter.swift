import Foundation
@testable import Engine

/// The application during `apply --online` (`ConcurrentWriter`, `GuardedWriter`): a thread of
/// transactions on the live store, mirrored into a shadow copy of it.
protocol OnlineWriter: AnyObject {
    var url: String { get }
    /// The live store's schema.
    var live: String { get }
    var commits: Int { get }
    /// Whether a transaction failed (the writer stopped then).
    var hasFailed: Bool { get }
    func start()
}

extension OnlineWriter {
    /// Waits (at most 30 s) until the writer has committed `count` transactions: on a loaded
    /// machine its thread may start late.
    func waitForCommits(_ count: Int) {
        let deadline = Date().addingTimeInterval(30)
        while commits < count && !hasFailed && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    }

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
}
