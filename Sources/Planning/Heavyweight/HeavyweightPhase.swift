/// A phase of a heavyweight step, in the order `apply` runs it (docs/development.md, "The step
/// runner"). Planning lays out the whole list for the step's mode (`StagedWork.phases`); the
/// engine's `HeavyweightPhases` maps each kind to its work and never orders or groups them
/// itself, and `plan --online` prints the list's `shown` lines.
public struct HeavyweightPhase: Sendable, Hashable {
    /// Closed: a new kind is a case the engine's switch must take.
    public enum Kind: Sendable, Hashable {
        /// The staging schema and the change tracking (online: the row change logs and
        /// triggers), when the step starts afresh.
        case install
        /// The second session keeping writes out of the old store until the swap: offline
        /// before the passes, online after the catch-up rounds.
        case writeGuard
        /// Passes by 1-based number, each committed with its checkpoint: one alone, or
        /// consecutive set-based stage 1 passes run at once on several sessions (`--jobs`).
        case passes([Int])
        /// Online: rounds mapping again the rows written meanwhile; `afterBuild`, the rounds
        /// after stage 3's build (which keep the last round, under the guard, small).
        case catchUpRounds(afterBuild: Bool)
        /// Online: stage 3's indexes, foreign keys and checks built before the write guard.
        case stageThreeBuild
        /// Online: the wait for `orchestrator control proceed`, rounds meanwhile; planned only
        /// under `--postpone-switch-over` (`PlanningOptions.postponesSwitchOver`).
        case waitToSwitchOver
        /// Offline: the staging schema takes the store's place, with the metadata.
        case swap
        /// Online: under the write guard, in one transaction, the last round, the rest of stage
        /// 3 (with the validate pass `validate`, 1-based) and the swap.
        case guardedSwap(validate: Int?)
    }

    public var kind: Kind
    /// An earlier, interrupted `apply` of this step did it: reported, not run.
    public var isDone = false
    /// What `plan --online` shows of it: one line per pass of a group, none for a phase
    /// another's line already tells (the rounds after the build, the swap).
    public var shown: [HeavyweightOnlinePhase] = []

    public init(_ kind: Kind, isDone: Bool = false, shown: [HeavyweightOnlinePhase] = []) {
        self.kind = kind
        self.isDone = isDone
        self.shown = shown
    }
}

extension HeavyweightPhase {
    /// The phases of `step` (a heavyweight one) run offline, or online when `online`:
    /// 1. the install (the row change logs too online); offline, the write guard;
    /// 2. the passes in order, consecutive set-based stage 1 passes grouped to run at once
    ///    (`groups`); online, the validate pass is left to the guarded swap;
    /// 3. online: catch-up rounds, stage 3's build, rounds again, the wait for the proceed
    ///    when `postponed` (`--postpone-switch-over`), the write guard;
    /// 4. the swap (online, guarded, with the validate pass in its transaction).
    public static func planned(_ step: PlannedStep, online: Bool, store: String, postponed: Bool = false) -> [HeavyweightPhase] {
        let passes = step.passes
        var phases = [HeavyweightPhase(.install, shown: online ? [OnlineCatchUp.installShown(step, store: store)] : [])]
        if !online { phases.append(HeavyweightPhase(.writeGuard)) }
        let validate = online ? passes.indices.last { passes[$0].stage == .validate } : nil
        for group in groups(passes) {
            let numbers = group.filter { $0 != validate }.map { $0 + 1 }
            guard !numbers.isEmpty else { continue }
            let shown = online ? numbers.map { OnlineCatchUp.passShown(passes[$0 - 1], store: store) } : []
            phases.append(HeavyweightPhase(.passes(numbers), shown: shown))
        }
        guard online else { return phases + [HeavyweightPhase(.swap)] }
        return phases + [
            HeavyweightPhase(.catchUpRounds(afterBuild: false), shown: [OnlineCatchUp.roundsShown(step)]),
            HeavyweightPhase(.stageThreeBuild, shown: [OnlineCatchUp.buildShown]),
            HeavyweightPhase(.catchUpRounds(afterBuild: true)),
        ] + (postponed ? [HeavyweightPhase(.waitToSwitchOver, shown: [OnlineCatchUp.waitShown(step, store: store)])] : []) + [
            HeavyweightPhase(.writeGuard, shown: [OnlineCatchUp.guardShown(step, store: store)]),
            HeavyweightPhase(.guardedSwap(validate: validate.map { $0 + 1 })),
        ]
    }

    /// `phases` with what `decision` found done marked so: the install of a step continued,
    /// and the passes its checkpoints record, split from their group (done first, in the
    /// group's place, with the group's lines, which `plan --online` shows as before).
    static func resumed(_ phases: [HeavyweightPhase], by decision: ResumeDecision) -> [HeavyweightPhase] {
        phases.flatMap { phase -> [HeavyweightPhase] in
            switch phase.kind {
            case .install:
                return [HeavyweightPhase(.install, isDone: !decision.startsAfresh, shown: phase.shown)]
            case .passes(let numbers):
                let done = numbers.filter { decision.done[$0] != nil }, left = numbers.filter { decision.done[$0] == nil }
                guard !done.isEmpty, !left.isEmpty else { return [HeavyweightPhase(phase.kind, isDone: left.isEmpty, shown: phase.shown)] }
                return [HeavyweightPhase(.passes(done), isDone: true, shown: phase.shown), HeavyweightPhase(.passes(left))]
            case .writeGuard, .catchUpRounds, .stageThreeBuild, .waitToSwitchOver, .swap, .guardedSwap:
                return [phase]
            }
        }
    }

    /// The passes' 0-based indices in runs: each consecutive run of at least two set-based
    /// stage 1 passes together, every other pass alone.
    static func groups(_ passes: [PlannedPass]) -> [[Int]] {
        var groups: [[Int]] = []
        var index = 0
        while index < passes.count {
            var end = index
            while end < passes.count, passes[end].stage == .createInstances, passes[end].stream == nil { end += 1 }
            end = max(end, index + 1)
            groups.append(Array(index..<end))
            index = end
        }
        return groups
    }
}

extension HeavyweightPhase {
    /// `step` with its phases laid out for its mode, when heavyweight: online when it runs
    /// online and can (a refused one is refused before any step runs), with the wait before
    /// the switch-over when `postponed`, those an earlier run did marked done; any other step
    /// as it is.
    static func laidOut(_ step: PlannedStep, store: String, postponed: Bool) -> PlannedStep {
        guard case .staged(var work) = step.body else { return step }
        var step = step
        let phases = planned(step, online: work.runsOnline && work.catchUp != nil, store: store, postponed: postponed)
        if case .decided(let decision) = work.resume {
            work.phases = resumed(phases, by: decision)
        } else {
            work.phases = phases
        }
        step.body = .staged(work)
        return step
    }
}

extension StagedWork {
    /// The phases as `plan --online` shows them, in order.
    public var shownPhases: [HeavyweightOnlinePhase] { phases.flatMap(\.shown) }
}
