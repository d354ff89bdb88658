import Planning

/// The step the rows of `orchestrator.checkpoints` name (`CheckpointTable`): its store, the
/// step, and the step's digest, computed once. `PassCheckpoints` (heavyweight passes) and
/// `OnlineCheckpoint` (a lightweight online run) are each made from one.
struct CheckpointedStep {
    var store: String
    var step: PlannedStep
    var digest: String

    init(store: String, step: PlannedStep) {
        self.store = store
        self.step = step
        digest = step.digest
    }
}

/// A reader and writer of one step's checkpoint rows.
protocol StepCheckpoints {
    var named: CheckpointedStep { get }
    init(named: CheckpointedStep)
}

extension StepCheckpoints {
    init(store: String, step: PlannedStep) {
        self.init(named: CheckpointedStep(store: store, step: step))
    }

    var store: String { named.store }
    var step: PlannedStep { named.step }
    var digest: String { named.digest }
}
