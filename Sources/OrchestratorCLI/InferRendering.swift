import JSONRendering
import ObjectModel
import Planning

/// `infer` output: the inferred mapping or the refusals, as text and as JSON.
enum InferRendering {
    static func json(_ result: InferenceResult, from: String, to: String) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("source", .string(from)),
            ("destination", .string(to)),
            ("inferable", .bool(result.isInferable)),
            ("reasons", .array(result.refusals.map { .string($0.description) })),
            ("refusals", .array(result.refusals.map { refusal in
                .object([
                    ("code", .string(refusal.code.rawValue)),
                    ("entity", .string(refusal.entity)),
                    ("property", refusal.property.map(JSONValue.string) ?? .null),
                    ("message", .string(refusal.message)),
                ])
            })),
        ]
        if let mapping = result.mapping {
            fields.append(("hasDataLoss", .bool(mapping.hasDataLoss)))
            fields.append(("entityMappings", .array(mapping.entityMappings.map(entityJSON))))
        }
        return .object(fields)
    }

    static func entityJSON(_ mapping: EntityMapping) -> JSONValue {
        .object([
            ("kind", .string(mapping.kind.rawValue)),
            ("source", mapping.sourceEntity.map(JSONValue.string) ?? .null),
            ("destination", mapping.destinationEntity.map(JSONValue.string) ?? .null),
            ("hierarchyChange", mapping.hierarchyChange.map { .string($0.description) } ?? .null),
            ("attributeMappings", .array(mapping.attributeMappings.map(propertyJSON))),
            ("relationshipMappings", .array(mapping.relationshipMappings.map(propertyJSON))),
        ])
    }

    static func propertyJSON(_ mapping: PropertyMapping) -> JSONValue {
        .object([
            ("kind", .string(mapping.kind.rawValue)),
            ("source", mapping.source.map(JSONValue.string) ?? .null),
            ("destination", mapping.destination.map(JSONValue.string) ?? .null),
            ("changes", .array(mapping.changes.map { .string($0.description) })),
        ])
    }

    static func text(_ result: InferenceResult, from: String, to: String) -> [String] {
        guard let mapping = result.mapping else {
            return ["'\(from)' -> '\(to)': not inferable; a mapping model is needed"] + result.refusals.map { "  refused: \($0)" }
        }
        var lines = ["'\(from)' -> '\(to)': inferable\(mapping.hasDataLoss ? " (loses data: needs --allow-data-loss to apply)" : "")"]
        for entity in mapping.entityMappings {
            let names = [entity.sourceEntity, entity.destinationEntity].compactMap { $0 }
            var line = "  \(entity.kind.rawValue) entity \(Set(names).count == 1 ? names[0] : names.joined(separator: " -> "))"
            if let change = entity.hierarchyChange { line += " (\(change))" }
            lines.append(line)
            for property in entity.attributeMappings + entity.relationshipMappings where property.kind != .copy || !property.changes.isEmpty {
                let names = [property.source, property.destination].compactMap { $0 }
                var line = "    \(property.kind.rawValue) \(Set(names).count == 1 ? names[0] : names.joined(separator: " -> "))"
                if !property.changes.isEmpty { line += ": " + property.changes.map(\.description).joined(separator: ", ") }
                lines.append(line)
            }
        }
        return lines
    }
}
