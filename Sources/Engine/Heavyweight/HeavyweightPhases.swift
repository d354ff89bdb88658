import Foundation
import ObjectModel
import Planning
import PostgresClient

/// A heavyweight step as the phases `StepRunner` runs (docs/development.md, "The step
/// runner"): the install (a fresh start), offline the write guard, the passes (consecutive
/// set-based stage 1 passes at once, `ConcurrentPasses`), online the catch-up rounds, stage 3's
/// build, more rounds, the wait for the proceed and the write guard, then the swap. The work of
/// each is `HeavyweightRun`'s; what they hand on to each other is `State`.
struct HeavyweightPhases {
    var run: HeavyweightRun
    var plan: MigrationPlan
    var started: Date
    /// Passes an earlier run committed, by 1-based number.
    var done: [Int: Checkpoint]
    /// Online: the catch-up plan; nil offline.
    var catchUp: OnlineCatchUp?
    var postponed: PostponedSwitchOver?
    var state: State

    /// What a phase leaves to the next ones.
    final class State {
        /// The last checkpoint: what the passes and rounds done left in the staging schema.
        var last: Checkpoint?
        var writeGuard: WriteGuard?
        /// False once stage 3's build failed every attempt (stage 3 then runs whole under the guard).
        var isBuilt = true
        var deferred: DeferredCleanup?
        /// Whether the staging schema has its write log (`StagingWriteLog`): true when this run
        /// makes the staging tables, nil until looked at when an earlier run made them.
        var stagingLogged: Bool?
        /// Offline, the sessions opening for the write guard and the first passes run at once.
        var sessions: SessionsOpening?

        init(last: Checkpoint?) {
            self.last = last
        }
    }

    var tracking: ChangeTracking { run.work.changeTracking }

    func all(startsAfresh: Bool) -> [RunPhase] {
        var phases: [RunPhase] = []
        if startsAfresh {
            phases.append(RunPhase(kind: .install, event: run.stageEvent(.install), reporting: catchUp == nil ? .silent : .events) { _ in
                try run.installTracking(tracking, catchUp)
                return 0
            })
        }
        if catchUp == nil {
            phases.append(RunPhase(kind: .writeGuard, event: run.stageEvent(.writeGuard), reporting: .silent) { _ in
                state.writeGuard = try run.takeWriteGuard(tracking, opening: state.sessions)
                if let last = state.last { try run.verify(since: last, tracking, state: state) }
                return 0
            })
        }
        phases += passes()
        if let catchUp { phases += online(catchUp) }
        let validate = catchUp == nil ? nil : run.work.passes.indices.last { run.work.passes[$0].stage == .validate }
        phases.append(RunPhase(kind: .swap, event: run.stageEvent(.swap), enclosing: validate.map { run.progress(.passStarted, pass: $0 + 1, of: run.work.passes[$0]) }) { context in
            try run.swap(plan: plan, started: started, rows: context.rowsBefore, catchUp: catchUp, validate: validate.map { run.work.passes[$0] }, state: state)
            return 0
        })
        return phases
    }

    /// The passes, each committed with its checkpoint; online, the validate pass is left to
    /// the swap's transaction.
    private func passes() -> [RunPhase] {
        let source = run.migrator.model.version(named: run.step.from ?? "")!
        let destination = run.migrator.model.version(named: run.step.to)!
        let passes = run.work.passes, jobs = run.jobs
        var phases: [RunPhase] = []
        var index = 0
        while index < passes.count {
            if catchUp != nil && passes[index].stage == .validate {
                index += 1
                continue
            }
            if jobs > 1, let range = ConcurrentPasses.range(in: passes, from: index) {
                phases += range.filter { done[$0 + 1] != nil }.map { pass($0, source: source, destination: destination) }
                phases.append(RunPhase(kind: .concurrentPasses, event: run.progress(.passStarted, pass: index + 1, of: passes[index]), reporting: .silent) { _ in
                    let (after, made) = try ConcurrentPasses(
                        run: run, range: range, done: done, jobs: jobs, after: state.last, writeGuard: state.writeGuard, opening: state.sessions
                    ).execute()
                    state.last = after
                    return made
                })
                index = range.upperBound
                continue
            }
            phases.append(pass(index, source: source, destination: destination))
            index += 1
        }
        return phases
    }

    /// Pass `index` (0-based), in one transaction with its checkpoint; resumed when done.
    private func pass(_ index: Int, source: ModelVersion, destination: ModelVersion) -> RunPhase {
        let pass = run.work.passes[index], number = index + 1
        let earlier = done[number]
        return RunPhase(
            kind: .pass(pass.stage), event: run.progress(.passStarted, pass: number, of: pass),
            start: { earlier.map { .resumed(rows: $0.rows) } ?? .run }, gatedAfter: { state.writeGuard != nil }
        ) { context in
            let validated = try run.validatePass(pass)
            let checkpoint = try run.options.executionPolicy.transaction(on: run.connection) {
                let rows = try run.runPass(
                    validated, source: source, destination: destination, onRows: context.rows, gate: context.gate, holdsWrites: state.writeGuard != nil
                )
                let checkpoint = try run.recordCheckpoint(validated, number: number, rows: rows, after: state.last, tracking)
                try state.writeGuard?.requireNoWrites(seen: checkpoint.changesSeen)
                return checkpoint
            }
            state.last = checkpoint
            return checkpoint.rows
        }
    }

    /// Online, before the write guard: catch-up rounds, stage 3's build, then rounds again,
    /// which keep the last round (under the guard) small, as the build ran while writes went
    /// on; with `--postpone-switch-over` the wait for the proceed (rounds meanwhile); then the
    /// guard, once the staging rows are counted (a scan: before the guard, not under it).
    private func online(_ catchUp: OnlineCatchUp) -> [RunPhase] {
        var phases = [
            RunPhase(kind: .catchUpRounds, event: run.catchUpEvent, reporting: .recorded) { _ in
                state.last = try run.catchUp(catchUp, after: state.last, tracking, onRound: run.reportRound)
                return 0
            },
            // Each attempt after a round mapping every write logged, so that the staging
            // tables hold what the old store held (short of the writes since).
            RunPhase(kind: .stageThreeBuild, event: run.stageEvent(.build), start: { try run.isStageThreeBuilt() ? .skipped : .run }) { _ in
                state.isBuilt = try run.buildStageThree {
                    state.last = try run.catchUp(catchUp, after: state.last, tracking, remainder: 0, rounds: 1, onRound: run.reportRound)
                }
                return 0
            },
            RunPhase(kind: .catchUpRounds, event: run.catchUpEvent, reporting: .silent, start: { state.isBuilt ? .run : .skipped }) { _ in
                state.last = try run.catchUp(catchUp, after: state.last, tracking, onRound: run.reportRound)
                return 0
            },
        ]
        if let postponed {
            phases.append(RunPhase(kind: .waitToSwitchOver, event: run.catchUpEvent, reporting: .recorded) { context in
                state.last = try run.waitToSwitchOver(postponed, catchUp, after: state.last, tracking, context: context)
                return 0
            })
        }
        phases.append(RunPhase(kind: .writeGuard, event: run.stageEvent(.writeGuard)) { _ in
            if let last = state.last { try run.verifyStagingRows(against: last, tracking, state: state) }
            state.writeGuard = try run.takeWriteGuard(tracking)
            return 0
        })
        return phases
    }
}
