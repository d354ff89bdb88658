import Foundation
import ObjectModel

/// Lightweight steps from the store's version to a later one (DESIGN.md, "Plan, then apply").
///
/// 1. Only forward: the target must come after the source in the model's order.
/// 2. Direct: one mapping inferred from source to target, taken when it loses nothing.
/// 3. Otherwise a chain through every version in between, one inferred step per pair: a
///    property renamed in v2 and again in v3 reaches v3 under its name, where a direct mapping
///    sees a removal and an addition.
/// 4. A direct mapping that loses data is taken when the chain cannot run.
/// 5. Nothing runs: every refusal of the chain (or of the direct mapping) is a blocker.
enum LightweightPath {
    static func steps(model: VersionedModel, from source: ModelVersion, to target: ModelVersion, schema: String) -> Result<[PlannedStep], Blockers> {
        guard let sourceIndex = model.versions.firstIndex(where: { $0.name == source.name }),
              let targetIndex = model.versions.firstIndex(where: { $0.name == target.name }) else {
            preconditionFailure("versions of a plan come from its model")
        }
        guard sourceIndex < targetIndex else {
            guard model.orderIsDeclared else { return directAgainstNameOrder(model: model, from: source, to: target, schema: schema) }
            return .failure(Blockers(reasons: [Blocker(
                .targetBeforeStore,
                "the store is at '\(source.name)', which comes after '\(target.name)' in the model's order; migrations only go forward (choose a later target version)"
            )]))
        }
        let direct = step(from: source, to: target, schema: schema)
        if case .success(let step) = direct, !step.hazards.contains(where: \.isDataLoss) {
            return .success([step])
        }
        guard targetIndex - sourceIndex > 1 else { return direct.map { [$0] } }

        var steps: [PlannedStep] = []
        var reasons: [Blocker] = []
        for index in sourceIndex..<targetIndex {
            switch step(from: model.versions[index], to: model.versions[index + 1], schema: schema) {
            case .success(let step): steps.append(step)
            case .failure(let blockers): reasons += blockers.reasons
            }
        }
        if reasons.isEmpty { return .success(steps) }
        if case .success(let step) = direct { return .success([step]) }
        return .failure(Blockers(reasons: reasons))
    }

    /// An `.xcdatamodeld` without a declared order is ordered by name, a guess that a renamed
    /// model defeats (`AppPartner 5` sorts after `AppFolio v1.4`, its successor). Core Data
    /// migrates such a store directly, and so does this: the one inferred step, or why there is
    /// none and how to declare the order that would let a chain go through the versions between.
    static func directAgainstNameOrder(model: VersionedModel, from source: ModelVersion, to target: ModelVersion, schema: String) -> Result<[PlannedStep], Blockers> {
        switch step(from: source, to: target, schema: schema) {
        case .success(let step): return .success([step])
        case .failure(let blockers):
            return .failure(Blockers(reasons: blockers.reasons + [Blocker(
                .noDirectStep,
                "the store is at '\(source.name)', which sorts after '\(target.name)' by name, and \((model.path as NSString).lastPathComponent) declares no order of its versions, so only a direct step can run, and none can (above); declare the order, oldest first, in \(XcodeVersionOrder.file(forPackage: model.path)) to go through the versions between (docs/model-format.md, \"Order of versions\")"
            )]))
        }
    }

    /// One inferred step, or why there is none: each refusal names its entity and property.
    static func step(from source: ModelVersion, to target: ModelVersion, schema: String) -> Result<PlannedStep, Blockers> {
        switch MappingInference.infer(from: source, to: target) {
        case .refused(let refusals):
            return .failure(Blockers(reasons: refusals.map { Blocker(.notInferable, "'\(source.name)' -> '\(target.name)': \($0.description)") }))
        case .inferable(let mapping):
            do {
                return .success(try LightweightMigration.step(for: mapping, from: source, to: target, schema: schema))
            } catch {
                return .failure(Blockers(reasons: [Blocker(.notInPlace, error.description)]))
            }
        }
    }

    struct Blockers: Error {
        var reasons: [Blocker]
    }
}
