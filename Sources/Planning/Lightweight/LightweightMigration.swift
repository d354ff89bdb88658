import ObjectModel

/// The in-place SQL of one lightweight step: an inferred mapping applied to a store of the
/// source version by ALTER / UPDATE / INSERT … SELECT statements, run in one transaction. Pure.
public enum LightweightMigration {
    /// The step, or every reason this release cannot run the mapping in place.
    public static func step(
        for mapping: InferredMapping, from source: ModelVersion, to destination: ModelVersion, schema: String
    ) throws(LightweightUnsupported) -> PlannedStep {
        let diff = LightweightDiff(pairing: LayoutPairing(mapping: mapping, source: source, destination: destination, schema: schema))
        guard diff.problems.isEmpty else {
            throw LightweightUnsupported(source: source.name, destination: destination.name, reasons: diff.problems)
        }
        let changes = diff.orderedChanges
        var hazards: [Hazard] = []
        for hazard in Hazard.dataLosses(of: mapping) + changes.flatMap(\.hazards) where !hazards.contains(hazard) {
            hazards.append(hazard)
        }
        return step(changes, from: source.name, to: destination.name, schema: schema, hazards: hazards)
    }

    /// The step of `changes`, in both forms: the planner keeps the one of the mode asked
    /// (`PlannedStep.planned(for:)`).
    static func step(_ changes: [any SchemaChange], from source: String, to destination: String, schema: String, hazards: [Hazard] = []) -> PlannedStep {
        var step = PlannedStep(
            body: .phased(OnlinePlanner.plan(changes, schema: schema)), from: source, to: destination,
            statements: changes.flatMap { $0.statements(in: schema) }, hazards: hazards
        )
        step.subscriberParts = changes.flatMap { $0.subscriberParts(in: schema) }
        return step
    }
}

/// An inferred mapping this release cannot run in place.
public struct LightweightUnsupported: Error, Sendable, Hashable, CustomStringConvertible {
    public var source: String
    public var destination: String
    public var reasons: [String]

    public var description: String {
        "'\(source)' -> '\(destination)' is inferred but cannot run in place: \(reasons.joined(separator: "; ")) (write a mapping model)"
    }
}
