import Foundation
import Planning

/// What `apply` reports while it runs: a step starting, a pass of a heavyweight step (per
/// stage and entity mapping) starting, rows done inside it, the pass or step finishing.
/// Renderers turn these into a progress bar, plain lines or JSON lines.
public struct ProgressEvent: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case stepStarted
        case passStarted
        /// Rows done so far in the running pass (streaming passes report each batch).
        case rows
        /// The pass committed; with resumed passes, `resumed` is true and nothing ran.
        case passFinished
        case stepFinished
        /// The run waits between two batches of the pass (`BetweenBatches`): `reason` says why.
        case paused
    }

    /// What runs: a step without passes, a pass of a heavyweight step, or its swap.
    public enum Stage: Sendable, Hashable {
        /// Create and lightweight steps run as one.
        case step
        case pass(PlannedPass.Stage)
        /// `apply --online`: rounds mapping again the rows written during the passes.
        case catchUp
        case swap
        /// `apply --online` of a heavyweight step: the change logs and row triggers installed.
        case install
        /// `apply --online` of a heavyweight step: stage 3's indexes and foreign keys built
        /// before the write guard (`OnlineStageThree`).
        case build
        /// `apply --online` of a heavyweight step: waiting for the write guard, then holding it.
        case writeGuard
        /// `apply --online` of a lightweight step: one of its phases, named by `phase`.
        case online

        /// `step`, the pass's stage (`prepare`, `createInstances`, …), `catchUp`, `swap`,
        /// `install`, `build`, `writeGuard` or `online`.
        public var name: String {
            switch self {
            case .step: "step"
            case .pass(let stage): stage.rawValue
            case .catchUp: "catchUp"
            case .swap: "swap"
            case .install: "install"
            case .build: "build"
            case .writeGuard: "writeGuard"
            case .online: "online"
            }
        }
    }

    public var kind: Kind
    /// 1-based step number and the plan's step count.
    public var step: Int
    public var stepCount: Int
    /// `create`, `lightweight` or `heavyweight`.
    public var stepKind: String
    public var from: String?
    public var to: String
    /// 1-based pass number inside the step and the step's pass count (1 for steps without
    /// passes: create and lightweight steps run as one).
    public var pass: Int
    public var passCount: Int
    public var stage: Stage
    /// Stage 2 runs in two parts per entity mapping: to-one, then to-many; nil elsewhere.
    public var part: PlannedPass.Part?
    public var entityMapping: String?
    /// `apply --online` of a lightweight step: the phase's summary, as `plan --online` prints it.
    public var phase: String?
    /// Nil outside heavyweight passes.
    public var execution: PlannedPass.Execution?
    public var rowsDone: Int
    /// Rows the pass is expected to touch (catalog estimate or exact count); nil when unknown.
    public var rowsTotal: Int?
    /// Seconds since the pass (or, for step events, the step) started.
    public var elapsedSeconds: Double
    /// True on `passFinished` when a checkpoint showed the pass done by an earlier run.
    public var resumed: Bool
    /// On `paused`: why the run waits ("paused by orchestrator control …").
    public var reason: String?

    public init(
        kind: Kind, step: Int, stepCount: Int, stepKind: String, from: String?, to: String, pass: Int, passCount: Int,
        stage: Stage, part: PlannedPass.Part? = nil, entityMapping: String? = nil, phase: String? = nil, execution: PlannedPass.Execution? = nil, rowsDone: Int = 0, rowsTotal: Int? = nil,
        elapsedSeconds: Double = 0, resumed: Bool = false
    ) {
        self.kind = kind
        self.step = step
        self.stepCount = stepCount
        self.stepKind = stepKind
        self.from = from
        self.to = to
        self.pass = pass
        self.passCount = passCount
        self.stage = stage
        self.part = part
        self.entityMapping = entityMapping
        self.phase = phase
        self.execution = execution
        self.rowsDone = rowsDone
        self.rowsTotal = rowsTotal
        self.elapsedSeconds = elapsedSeconds
        self.resumed = resumed
    }

    /// Rows per second so far; nil before a row is done or a measurable time has passed.
    public var rate: Double? {
        guard rowsDone > 0, elapsedSeconds > 0.001 else { return nil }
        return Double(rowsDone) / elapsedSeconds
    }

    /// Seconds left at the current rate; nil without a total or a rate.
    public var etaSeconds: Double? {
        guard let rowsTotal, let rate, rate > 0 else { return nil }
        return max(0, Double(rowsTotal - rowsDone) / rate)
    }
}
