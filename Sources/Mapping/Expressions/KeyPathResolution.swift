import ObjectModel

/// Resolving `$source` key paths in the source version: every step but the last must be a
/// stored to-one relationship.
extension Site {
    /// The source entity of the entity mapping, or why there is none.
    func sourceEntity(keyPath: String) throws(ExpressionCheckError) -> Entity {
        guard let name = checker.entityMapping.sourceEntity else {
            throw failure("entity mapping \(checker.entityMapping.name) has no source entity, so $source is nil", keyPath: keyPath)
        }
        guard let entity = source.entity(named: name) else {
            throw failure("source entity \(name) is not in version \(source.name)", keyPath: keyPath)
        }
        return entity
    }

    /// `$source.chef.name`: to-one relationships, then a stored attribute.
    func attribute(at path: [String]) throws(ExpressionCheckError) -> AttributeReference {
        precondition(!path.isEmpty, "a key path names at least one property")
        let keyPath = ValueExpression.keyPath(.source, path).description
        let (relationships, entity) = try followToOne(path.dropLast(), keyPath: keyPath)
        let name = path[path.count - 1]
        if let attribute = source.allAttributes(of: entity).first(where: { $0.name == name }) {
            guard !attribute.isTransient, attribute.type != .undefined else {
                throw failure("'\(name)' of \(entity.name) is transient: it has no stored value", keyPath: keyPath)
            }
            let column = source.propertyColumns.column(ofProperty: name, of: entity, in: source)
            return AttributeReference(relationships: relationships.map(\.name), attribute: attribute, columnName: column)
        }
        if let relationship = source.allRelationships(of: entity).first(where: { $0.name == name }) {
            throw failure(
                "'\(name)' is a relationship of \(entity.name), not an attribute", keyPath: keyPath,
                hint: "name an attribute of \(relationship.destination) ($source.\(path.joined(separator: ".")).<attribute>), or map it in relationships"
            )
        }
        throw noProperty(name, in: entity, keyPath: keyPath)
    }

    /// `$source.chef` or `$source.recipe.ingredients`: to-one relationships, then any
    /// relationship. Returns the relationships and the entity the last one leads to.
    func relationships(at path: [String]) throws(ExpressionCheckError) -> (relationships: [Relationship], target: Entity) {
        precondition(!path.isEmpty, "a key path names at least one property")
        let keyPath = ValueExpression.keyPath(.source, path).description
        let (steps, entity) = try followToOne(path.dropLast(), keyPath: keyPath)
        let name = path[path.count - 1]
        guard let relationship = source.allRelationships(of: entity).first(where: { $0.name == name }) else {
            if source.allAttributes(of: entity).contains(where: { $0.name == name }) {
                throw failure("'\(name)' is an attribute of \(entity.name), not a relationship", keyPath: keyPath)
            }
            throw noProperty(name, in: entity, keyPath: keyPath)
        }
        let target = try destinationEntity(of: relationship, in: entity, keyPath: keyPath)
        return (steps + [relationship], target)
    }

    /// Follows to-one relationships from the source entity.
    private func followToOne(_ names: ArraySlice<String>, keyPath: String) throws(ExpressionCheckError) -> ([Relationship], Entity) {
        var entity = try sourceEntity(keyPath: keyPath)
        var steps: [Relationship] = []
        for name in names {
            guard let relationship = source.allRelationships(of: entity).first(where: { $0.name == name }) else {
                if source.allAttributes(of: entity).contains(where: { $0.name == name }) {
                    throw failure("'\(name)' is an attribute of \(entity.name): a key path cannot go past it", keyPath: keyPath)
                }
                throw noProperty(name, in: entity, keyPath: keyPath)
            }
            guard !relationship.isToMany else {
                throw failure(
                    "'\(name)' is a to-many relationship of \(entity.name): key paths go through to-one relationships only",
                    keyPath: keyPath,
                    hint: "a to-many relationship can only be the sourceInstances of FUNCTION($manager, \"\(ValueExpression.destinationInstancesSelector)\", …) in a relationship mapping"
                )
            }
            entity = try destinationEntity(of: relationship, in: entity, keyPath: keyPath)
            steps.append(relationship)
        }
        return (steps, entity)
    }

    private func destinationEntity(of relationship: Relationship, in entity: Entity, keyPath: String) throws(ExpressionCheckError) -> Entity {
        guard !relationship.isTransient else {
            throw failure("'\(relationship.name)' of \(entity.name) is transient: it has no stored value", keyPath: keyPath)
        }
        guard let next = source.entity(named: relationship.destination) else {
            throw failure(
                "relationship '\(relationship.name)' of \(entity.name) leads to \(relationship.destination), which is not in version \(source.name)",
                keyPath: keyPath
            )
        }
        return next
    }

    private func noProperty(_ name: String, in entity: Entity, keyPath: String) -> ExpressionCheckError {
        let names = source.allAttributes(of: entity).map(\.name) + source.allRelationships(of: entity).map(\.name)
        let guess = names.first { $0.lowercased() == name.lowercased() }
            ?? names.map { ($0, editDistance($0.lowercased(), name.lowercased())) }.filter { $0.1 <= 2 }.min { $0.1 < $1.1 }?.0
        return failure(
            "\(entity.name) has no property '\(name)' in version \(source.name)", keyPath: keyPath,
            hint: guess.map { "did you mean '\($0)'?" }
        )
    }
}
