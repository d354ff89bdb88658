import Foundation
import ObjectModel

/// Checks a mapping model against the versioned model before anything runs: its versions and
/// entities exist, every property it maps exists in the destination, and every expression and
/// filter parses and type-checks against both versions. Every problem is listed.
public enum MappingModelValidator {
    public static func validate(_ mapping: MappingModel, model: VersionedModel) -> [MappingIssue] {
        func issue(_ entityMapping: String?, _ property: String?, _ message: String) -> MappingIssue {
            MappingIssue(file: mapping.file, entityMapping: entityMapping, property: property, message: message)
        }
        let versionProblems = versionIssues(mapping, model: model)
        if !versionProblems.isEmpty { return versionProblems }
        guard let source = model.version(named: mapping.source), let destination = model.version(named: mapping.destination) else {
            let unusable = [mapping.source, mapping.destination].filter { model.version(named: $0) == nil }
            return [issue(nil, nil, "cannot be checked: version(s) \(unusable.map { "'\($0)'" }.joined(separator: ", ")) cannot be used (see the problems of the model)")]
        }
        // The entity mappings a native file gets by default are checked like written ones.
        let mapping = mapping.completed(source: source, destination: destination)
        var issues = mapping.duplicateEntityMappingReasons.map { issue(nil, nil, $0) }
        for entityMapping in mapping.entityMappings {
            if let name = entityMapping.sourceEntity, source.entity(named: name) == nil {
                issues.append(issue(entityMapping.name, nil, "source entity '\(name)' does not exist in '\(source.name)'"))
            }
            guard let name = entityMapping.destinationEntity else { continue }
            guard let entity = destination.entity(named: name) else {
                issues.append(issue(entityMapping.name, nil, "destination entity '\(name)' does not exist in '\(destination.name)'"))
                continue
            }
            guard entityMapping.sourceEntity.map({ source.entity(named: $0) != nil }) ?? true else { continue }
            let checker = ExpressionChecker(entityMapping: entityMapping, entityMappings: mapping.entityMappings, source: source, destination: destination)
            issues += check(entityMapping.attributeMappings, against: destination.allAttributes(of: entity), of: name, "attribute", in: entityMapping.name, file: mapping.file) {
                _ = try checker.check($0, destinationAttribute: $1)
            }
            issues += check(entityMapping.relationshipMappings, against: destination.allRelationships(of: entity), of: name, "relationship", in: entityMapping.name, file: mapping.file) {
                _ = try checker.checkRelationship($0, destinationRelationship: $1)
            }
            if let filter = entityMapping.filter {
                do {
                    _ = try checker.checkFilter(try ExpressionParser.parsePredicate(filter))
                } catch {
                    issues.append(issue(entityMapping.name, nil, "filter: " + oneLine(error)))
                }
            }
        }
        return issues
    }

    /// A mapping model must name versions of the model: one that names another would be passed
    /// over, and its step would run as an inferred one. Each bad name comes with the closest
    /// version name.
    public static func versionIssues(_ mapping: MappingModel, model: VersionedModel) -> [MappingIssue] {
        [("source", mapping.source), ("destination", mapping.destination)].compactMap { role, name in
            guard !model.versionNames.contains(name) else { return nil }
            let closest = closestName(to: name, in: model.versionNames).map { "; did you mean '\($0)'?" } ?? ""
            return MappingIssue(
                file: mapping.file,
                message: "its \(role) names version '\(name)', which \(model.name) does not have\(closest) (versions: \(model.versionNames.joined(separator: ", ")))"
            )
        }
    }

    /// Each property mapping names a destination property of its kind (`kind`, of `entity`),
    /// and its value expression checks against that property.
    static func check<Property: PropertyDescription>(
        _ propertyMappings: [PropertyMappingDefinition], against properties: [Property], of entity: String, _ kind: String,
        in entityMapping: String, file: String, _ checkAgainst: (ValueExpression, Property) throws -> Void
    ) -> [MappingIssue] {
        var issues: [MappingIssue] = []
        for propertyMapping in propertyMappings {
            guard let property = properties.first(where: { $0.name == propertyMapping.name }) else {
                issues.append(MappingIssue(file: file, entityMapping: entityMapping, property: propertyMapping.name, message: "\(entity) has no \(kind) '\(propertyMapping.name)'"))
                continue
            }
            guard let text = propertyMapping.valueExpression else { continue }
            issues += check(text, entityMapping: entityMapping, property: propertyMapping.name, file: file) { try checkAgainst($0, property) }
        }
        return issues
    }

    static func check(
        _ text: String, entityMapping: String, property: String, file: String,
        _ body: (ValueExpression) throws -> Void
    ) -> [MappingIssue] {
        do {
            try body(try ExpressionParser.parseExpression(text))
            return []
        } catch let error as ExpressionCheckError {
            return [MappingIssue(file: file, entityMapping: entityMapping, property: property, message: oneLine(error.message + (error.keyPath.map { " (\($0))" } ?? "") + ": " + error.expression))]
        } catch {
            return [MappingIssue(file: file, entityMapping: entityMapping, property: property, message: oneLine(error))]
        }
    }

    static func oneLine(_ error: Any) -> String {
        String(describing: error).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }
}
