import Foundation
import Planning

/// One phase of a step as `StepRunner` runs it: its kind, how it is reported, whether an earlier
/// run did it, and its work. The work stays with its kind (`OnlineRun`, `HeavyweightRun`,
/// `KeysetBatches`, `ConcurrentPasses`); the loop and the bookkeeping around it are the runner's.
struct RunPhase {
    /// Every kind of phase a step runs (docs/development.md, "The step runner"). Closed: a new
    /// kind is a case each switch over it must take.
    enum Kind: Equatable {
        /// Lightweight online phases, by `OnlinePhase.Execution`: one short transaction, keyset
        /// batches, one statement outside any transaction (`CREATE INDEX CONCURRENTLY`).
        case transaction, batches, outsideTransaction
        /// The last lightweight online phase: drops the triggers and records the new version.
        case switchOver
        /// `--postpone-switch-over`: waits for `orchestrator control proceed` (heavyweight:
        /// with catch-up rounds meanwhile).
        case waitToSwitchOver
        /// Heavyweight: the staging schema and the change tracking (online: the row change log).
        case install
        /// Heavyweight: one pass, committed with its checkpoint.
        case pass(PlannedPass.Stage)
        /// Heavyweight: consecutive set-based stage 1 passes on several sessions at once.
        case concurrentPasses
        /// Heavyweight online: rounds mapping again the rows written meanwhile.
        case catchUpRounds
        /// Heavyweight online: stage 3's indexes and foreign keys built before the write guard.
        case stageThreeBuild
        /// Heavyweight: the second session keeping writes out of the old store until the swap.
        case writeGuard
        /// Heavyweight: the staging schema takes the store's place, with the metadata.
        case swap

        /// A lightweight online phase that is not the switch-over.
        init(_ execution: OnlinePhase.Execution) {
            switch execution {
            case .transaction: self = .transaction
            case .batches: self = .batches
            case .outsideTransaction: self = .outsideTransaction
            }
        }

        /// As the docs and `plan --online` name it.
        var name: String {
            switch self {
            case .transaction: "transaction"
            case .batches: "batches"
            case .outsideTransaction: "outsideTransaction"
            case .switchOver: "switchOver"
            case .waitToSwitchOver: "waitToSwitchOver"
            case .install: "install"
            case .pass(let stage): "pass \(stage.rawValue)"
            case .concurrentPasses: "concurrentPasses"
            case .catchUpRounds: "catchUpRounds"
            case .stageThreeBuild: "stageThreeBuild"
            case .writeGuard: "writeGuard"
            case .swap: "swap"
            }
        }
    }

    /// What the runner reports of the phase.
    enum Reporting: Equatable {
        /// A `passStarted` and a `passFinished` event, and the run record's phase.
        case events
        /// The run record's phase only: the work reports its own events.
        case recorded
        /// Nothing: the work reports itself, or is no phase of its own to the user.
        case silent
    }

    /// Whether the phase runs, decided when the runner reaches it.
    enum Start: Equatable {
        case run
        /// An earlier run committed it, with these rows: reported finished (`resumed`), not run.
        case resumed(rows: Int)
        /// Nothing left to do, and nothing reported.
        case skipped
    }

    var kind: Kind
    /// Its `passStarted` event; its other events (rows, paused, finished) are made from it.
    var event: ProgressEvent
    var reporting = Reporting.events
    var start: () throws -> Start = { .run }
    /// A pass run inside this phase's transaction, reported started before it and finished
    /// after it (the validate pass of an online heavyweight step, in the swap's transaction).
    var enclosing: ProgressEvent?
    /// When set, the hooks are asked after the phase commits (a heavyweight pass), told
    /// whether the write guard is held.
    var gatedAfter: (() -> Bool)?
    /// Runs the phase; returns the rows it wrote.
    var work: (PhaseContext) throws -> Int
}

/// What a phase's work gets from the runner.
struct PhaseContext {
    var runner: StepRunner
    /// The phase's `passStarted` event.
    var event: ProgressEvent
    var started: Date
    /// Rows of the step's phases before this one (resumed ones included).
    var rowsBefore: Int

    /// A `rows` event of the phase: `done` so far.
    func rows(_ done: Int) {
        var batch = event
        batch.kind = .rows
        batch.rowsDone = done
        batch.elapsedSeconds = Date().timeIntervalSince(started)
        runner.onProgress(batch)
    }

    /// The hooks between units of work of this phase; a pause is a `paused` event of it.
    var gate: BatchGate { runner.gate(for: event) }

    /// A `paused` event of the phase.
    func paused(_ reason: String) {
        runner.paused(event, reason: reason)
    }

    /// The statement running, for the step's error when the phase fails (nil: none).
    func running(_ statement: PlannedStatement?) {
        runner.failure.statement = statement
    }
}
