import Testing
import ObjectModel
@testable import Planning

/// Inline versions (see `InferenceFixtures`) turned into the statements of their lightweight step.
enum LightweightFixtures {
    static func step(_ source: String, _ destination: String) throws -> PlannedStep {
        let from = try InferenceFixtures.version(source, name: "source")
        let to = try InferenceFixtures.version(destination, name: "destination")
        let mapping = try #require(MappingInference.infer(from: from, to: to).mapping, "not inferable")
        return try LightweightMigration.step(for: mapping, from: from, to: to, schema: "s")
    }

    /// The step's SQL, one statement per element, as `plan` prints it.
    static func sql(_ source: String, _ destination: String) throws -> [String] {
        try step(source, destination).statements.map(\.sql.text)
    }
}
