import Foundation
import Planning
import PostgresClient

/// Runs a step's phases in order (docs/development.md, "The step runner"), one loop for every
/// kind of step: lightweight online phases (`OnlineRun`) and heavyweight passes, catch-up
/// rounds, stage 3's build, write guard and swap (`HeavyweightRun`). For each phase:
/// 1. whether it runs: an earlier run's checkpoint may show it done (reported finished and
///    `resumed`), or nothing may be left to do;
/// 2. its `passStarted` event and the run record's phase (`RunRecord`), as its `Reporting` says;
/// 3. its work, which reports rows, asks the hooks between its units of work (`BatchGate`) and
///    names the statement running for the step's error (`failure`);
/// 4. its `passFinished` event with its rows and time; then, for a heavyweight pass, the hooks.
struct StepRunner {
    var store: String
    var connection: PostgresConnection
    var options: ApplyOptions
    var onProgress: (ProgressEvent) -> Void
    var failure = Failure()

    /// The statement that was running when a phase failed, for the step's error.
    final class Failure {
        var statement: PlannedStatement?
    }

    /// Returns the rows of every phase, those an earlier run did included.
    func run(_ phases: [RunPhase]) throws -> Int {
        var rows = 0
        for phase in phases {
            rows += try run(phase, after: rows)
        }
        return rows
    }

    private func run(_ phase: RunPhase, after rowsBefore: Int) throws -> Int {
        var event = phase.event
        switch try phase.start() {
        case .skipped:
            return 0
        case .resumed(let rows):
            event.kind = .passFinished
            event.rowsDone = rows
            event.resumed = true
            onProgress(event)
            return rows
        case .run:
            break
        }
        if let enclosing = phase.enclosing { onProgress(enclosing) }
        if phase.reporting == .events { onProgress(event) }
        if phase.reporting != .silent { options.runRecord?.phase(of: event) }
        let started = Date()
        let rows = try phase.work(PhaseContext(runner: self, event: event, started: started, rowsBefore: rowsBefore))
        if var enclosing = phase.enclosing {
            enclosing.kind = .passFinished
            enclosing.elapsedSeconds = Date().timeIntervalSince(started)
            onProgress(enclosing)
        }
        if phase.reporting == .events {
            event.kind = .passFinished
            event.rowsDone = rows
            event.elapsedSeconds = Date().timeIntervalSince(started)
            onProgress(event)
        }
        if let holdsWrites = phase.gatedAfter {
            try gate(for: phase.event).pass(BatchPosition(store: store, rowsDone: rowsBefore + rows, holdsWrites: holdsWrites()))
        }
        return rows
    }

    /// Asks the run's hooks (`BetweenBatches`); a pause is reported as a `paused` event of the
    /// phase `event` starts.
    func gate(for event: ProgressEvent) -> BatchGate {
        BatchGate(options: options, store: store, connection: connection) { reason in paused(event, reason: reason) }
    }

    /// A `paused` event of the phase `event` starts.
    func paused(_ event: ProgressEvent, reason: String) {
        var paused = event
        paused.kind = .paused
        paused.reason = reason
        onProgress(paused)
    }
}
