import Testing
import ObjectModel
import Planning

/// Small inline versions for inference tests, and a one-line-per-change rendering of mappings.
enum InferenceFixtures {
    /// A valid version from native YAML entity lines (flow style), e.g. `Recipe: {attributes: {name: string}}`.
    static func version(_ entityLines: String, name: String) throws -> ModelVersion {
        let body = entityLines.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")
        let version = try NativeModelLoader.parseVersion("entities:\n" + body + "\n", name: name, file: "\(name).yaml")
        let issues = ModelValidator.validate(version)
        #expect(issues.isEmpty, "test version \(name) is invalid: \(issues)")
        return version
    }

    static func infer(_ source: String, _ destination: String) throws -> InferenceResult {
        MappingInference.infer(from: try version(source, name: "source"), to: try version(destination, name: "destination"))
    }

    /// Everything that is not a plain copy, one line each, in mapping order:
    /// `add entity Cuisine`, `Recipe.rating: made required (…)`, `Recipe.title renamed from name`.
    static func summary(_ mapping: InferredMapping) -> [String] {
        var lines: [String] = []
        for entity in mapping.entityMappings {
            let name = entity.destinationEntity ?? entity.sourceEntity!
            switch entity.kind {
            case .add: lines.append("add entity \(name)")
            case .remove: lines.append("remove entity \(name)")
            case .rename: lines.append("rename entity \(entity.sourceEntity!) -> \(name)")
            case .copy: break
            }
            if let change = entity.hierarchyChange { lines.append("\(name): \(change)") }
            guard entity.kind == .copy || entity.kind == .rename else { continue }
            for property in entity.attributeMappings + entity.relationshipMappings {
                var line: String
                switch property.kind {
                case .copy where property.changes.isEmpty && !property.needsDataCheck: continue
                case .copy: line = "\(name).\(property.destination!)"
                case .rename: line = "\(name).\(property.destination!) renamed from \(property.source!)"
                case .add: line = "\(name).\(property.destination!) added"
                case .remove: line = "\(name).\(property.source!) removed"
                }
                if !property.changes.isEmpty { line += ": " + property.changes.map(\.description).joined(separator: ", ") }
                if property.needsDataCheck { line += " (data check)" }
                lines.append(line)
            }
        }
        return lines
    }

    /// `Entity.property: code`, or `Entity: code`, in the order returned.
    static func culprits(_ refusals: [InferenceRefusal]) -> [String] {
        refusals.map { refusal in
            (refusal.property.map { "\(refusal.entity).\($0)" } ?? refusal.entity) + ": " + refusal.code.rawValue
        }
    }
}
