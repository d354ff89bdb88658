import Foundation
import ObjectModel
import Planning
import PostgresClient

/// A heavyweight step as the phases `StepRunner` runs (docs/development.md, "The step
/// runner"): the phases Planning laid out (`StagedWork.phases`, `HeavyweightPhase`), in their
/// order and groups, each kind mapped to its work. The work of each is `HeavyweightRun`'s;
/// what they hand on to each other is `State`.
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

    /// The step's planned phases (`StagedWork.phases`), each mapped to its work in order;
    /// those an earlier run did are reported resumed (passes) or left out (the install).
    func all() -> [RunPhase] {
        run.work.phases.flatMap { phase in observed(phase.kind, runPhases(of: phase)) }
    }

    /// What `phase` runs: no `default`, so a new kind of phase is a case to take here.
    private func runPhases(of phase: HeavyweightPhase) -> [RunPhase] {
        switch phase.kind {
        case .install:
            return phase.isDone ? [] : [install()]
        case .writeGuard:
            return [catchUp == nil ? writeGuard() : writeGuardAfterRounds()]
        case .passes(let numbers):
            return passes(numbers, isDone: phase.isDone)
        case .catchUpRounds(let afterBuild):
            return [rounds(afterBuild: afterBuild)]
        case .stageThreeBuild:
            return [stageThreeBuild()]
        case .waitToSwitchOver:
            return postponed.map { [waitToSwitchOver($0)] } ?? []
        case .swap:
            return [swap(validate: nil)]
        case .guardedSwap(let validate):
            return [swap(validate: validate)]
        }
    }

    /// `phases`, telling `ApplyOptions.phasesRun` (tests) when the first of them starts its work.
    private func observed(_ kind: HeavyweightPhase.Kind, _ phases: [RunPhase]) -> [RunPhase] {
        guard let record = run.options.phasesRun else { return phases }
        let started = HeavyweightPhasesRun.Once()
        return phases.map { phase in
            var phase = phase
            let work = phase.work
            phase.work = { context in
                if started.first() { record.append(kind) }
                return try work(context)
            }
            return phase
        }
    }

    private func install() -> RunPhase {
        RunPhase(kind: .install, event: run.stageEvent(.install), reporting: catchUp == nil ? .silent : .events) { _ in
            try run.installTracking(tracking, catchUp)
            return 0
        }
    }

    /// Offline, before the passes: the guard, then what an earlier run left checked under it.
    private func writeGuard() -> RunPhase {
        RunPhase(kind: .writeGuard, event: run.stageEvent(.writeGuard), reporting: .silent) { _ in
            state.writeGuard = try run.takeWriteGuard(tracking, opening: state.sessions)
            if let last = state.last { try run.verify(since: last, tracking, state: state) }
            return 0
        }
    }

    /// Online, after the rounds: the guard, once the staging rows are counted (a scan: before
    /// the guard, not under it).
    private func writeGuardAfterRounds() -> RunPhase {
        RunPhase(kind: .writeGuard, event: run.stageEvent(.writeGuard)) { _ in
            if let last = state.last { try run.verifyStagingRows(against: last, tracking, state: state) }
            state.writeGuard = try run.takeWriteGuard(tracking)
            return 0
        }
    }

    /// The swap; online (`validate`: the validate pass's number), the last round and the rest
    /// of stage 3 in its transaction, the validate pass reported around it.
    private func swap(validate: Int?) -> RunPhase {
        let pass = validate.map { run.work.passes[$0 - 1] }
        return RunPhase(kind: .swap, event: run.stageEvent(.swap), enclosing: pass.map { run.progress(.passStarted, pass: validate!, of: $0) }) { context in
            try run.swap(plan: plan, started: started, rows: context.rowsBefore, catchUp: catchUp, validate: pass, state: state)
            return 0
        }
    }

    /// A group of passes (1-based numbers): on several sessions at once (`ConcurrentPasses`)
    /// when it holds more than one and `--jobs` allows; else one by one, reported resumed
    /// when an earlier run did them.
    private func passes(_ numbers: [Int], isDone: Bool) -> [RunPhase] {
        let source = run.migrator.model.version(named: run.step.from ?? "")!
        let destination = run.migrator.model.version(named: run.step.to)!
        let jobs = run.jobs, guarded = catchUp == nil, state = state, run = run
        // Whether the staging schema logs others' writes is known by now offline (made by this
        // run, or looked at under the guard); a split pass needs it.
        let parts = { (pass: PlannedPass) in ConcurrentPasses.parts(of: pass, in: run, jobs: jobs, guarded: guarded, stagingLogged: state.stagingLogged == true) }
        guard !isDone, ConcurrentPasses.runsTogether(numbers, passes: run.work.passes, jobs: jobs, parts: parts) else {
            return numbers.map { pass($0 - 1, source: source, destination: destination) }
        }
        let first = numbers[0] - 1
        return [
            RunPhase(kind: .concurrentPasses, event: run.progress(.passStarted, pass: first + 1, of: run.work.passes[first]), reporting: .silent) { _ in
                let (after, made) = try ConcurrentPasses(
                    run: run, numbers: numbers, done: done, jobs: jobs, after: state.last, writeGuard: state.writeGuard, opening: state.sessions,
                    stagingLogged: state.stagingLogged == true
                ).execute()
                state.last = after
                return made
            },
        ]
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
                // Offline, a pass with a split form may have been run in parts by a run stopped
                // before its checkpoint (an earlier run, whose passes are done): what those parts
                // left goes first.
                if let clear = validated.split?.clear, catchUp == nil, !done.isEmpty { _ = try run.execute(clear) }
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

    /// Online: rounds until few writes are left; after stage 3's build, only when it was built.
    private func rounds(afterBuild: Bool) -> RunPhase {
        let catchUp = run.onlinePlan()
        return RunPhase(
            kind: .catchUpRounds, event: run.catchUpEvent, reporting: afterBuild ? .silent : .recorded, start: { !afterBuild || state.isBuilt ? .run : .skipped }
        ) { _ in
            state.last = try run.catchUp(catchUp, after: state.last, tracking, onRound: run.reportRound)
            return 0
        }
    }

    /// Online: each attempt after a round mapping every write logged, so that the staging
    /// tables hold what the old store held (short of the writes since).
    private func stageThreeBuild() -> RunPhase {
        let catchUp = run.onlinePlan()
        return RunPhase(kind: .stageThreeBuild, event: run.stageEvent(.build), start: { try run.isStageThreeBuilt() ? .skipped : .run }) { _ in
            state.isBuilt = try run.buildStageThree {
                state.last = try run.catchUp(catchUp, after: state.last, tracking, remainder: 0, rounds: 1, onRound: run.reportRound)
            }
            return 0
        }
    }

    /// `--postpone-switch-over`: the wait for the proceed, with rounds meanwhile.
    private func waitToSwitchOver(_ postponed: PostponedSwitchOver) -> RunPhase {
        let catchUp = run.onlinePlan()
        return RunPhase(kind: .waitToSwitchOver, event: run.catchUpEvent, reporting: .recorded) { context in
            state.last = try run.waitToSwitchOver(postponed, catchUp, after: state.last, tracking, context: context)
            return 0
        }
    }
}

/// The kinds of the planned phases a heavyweight run started, in order (`ApplyOptions.phasesRun`):
/// what the tests tying the run to its plan compare with `StagedWork.phases`.
final class HeavyweightPhasesRun: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [HeavyweightPhase.Kind] = []

    var kinds: [HeavyweightPhase.Kind] { lock.withLock { recorded } }

    func append(_ kind: HeavyweightPhase.Kind) {
        lock.withLock { recorded.append(kind) }
    }

    /// True the first time only.
    final class Once: @unchecked Sendable {
        private var done = false
        func first() -> Bool {
            defer { done = true }
            return !done
        }
    }
}
