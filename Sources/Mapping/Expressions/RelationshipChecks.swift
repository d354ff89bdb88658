import ObjectModel

extension ExpressionChecker {
    /// Checks the expression of a destination relationship: Core Data's
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "Name",
    /// $source.path)`, or a policy function (which needs Swift).
    public func checkRelationship(
        _ expression: ValueExpression, destinationRelationship: Relationship
    ) throws(ExpressionCheckError) -> RelationshipExpression {
        let site = Site(checker: self, property: destinationRelationship.name, expression: expression.description)
        return try site.relationship(expression, destinationRelationship)
    }
}

extension Site {
    func relationship(_ expression: ValueExpression, _ destinationRelationship: Relationship) throws(ExpressionCheckError) -> RelationshipExpression {
        guard case .function(let target, let selector, let arguments) = expression else {
            throw failure("a relationship mapping needs destination objects", hint: relationshipHint(for: expression, destinationRelationship))
        }
        guard target == .variable(.manager), selector == ValueExpression.destinationInstancesSelector else {
            guard case .variable(let variable) = target else {
                throw failure("a relationship mapping needs destination objects", hint: relationshipHint(for: expression, destinationRelationship))
            }
            _ = try value(expression)
            return .function(target: variable, selector: selector, arguments: arguments)
        }
        precondition(arguments.count == 2, "\(selector) takes 2 arguments")
        guard case .constant(.string(let mappingName)) = arguments[0] else {
            throw failure("the entity mapping name in \(selector) must be a string constant, not \(arguments[0])")
        }
        guard case .keyPath(.source, let path) = arguments[1] else {
            throw failure("the source instances in \(selector) must be a $source key path to a relationship, not \(arguments[1])")
        }
        let keyPath = arguments[1].description
        let (relationships, reached) = try self.relationships(at: path)
        if !destinationRelationship.isToMany, relationships[relationships.count - 1].isToMany {
            throw failure(
                "'\(path[path.count - 1])' is a to-many relationship, but '\(destinationRelationship.name)' is to-one",
                keyPath: keyPath
            )
        }
        try checkMapping(named: mappingName, from: reached, to: destinationRelationship, keyPath: keyPath)
        return .destinationInstances(mappingName: mappingName, sourceKeyPath: path)
    }

    /// The named entity mapping must exist, read the entity the key path leads to (or one of
    /// its hierarchy) and make objects the destination relationship can hold.
    private func checkMapping(named name: String, from sourceTarget: Entity, to relationship: Relationship, keyPath: String) throws(ExpressionCheckError) {
        let mappings = checker.entityMappings
        guard let mapping = mappings.first(where: { $0.name == name }) else {
            throw failure(
                "no entity mapping named '\(name)' in this mapping model",
                hint: mappings.isEmpty ? nil : "entity mappings: " + mappings.map(\.name).joined(separator: ", ")
            )
        }
        let sourceRoot = source.root(of: sourceTarget).name
        guard let mappedSource = mapping.sourceEntity.flatMap({ source.entity(named: $0) }),
              source.root(of: mappedSource).name == sourceRoot else {
            throw failure(
                "entity mapping \(name) reads \(mapping.sourceEntity ?? "no source entity"), but \(keyPath) leads to \(sourceTarget.name)",
                keyPath: keyPath
            )
        }
        let destination = checker.destination
        guard let made = mapping.destinationEntity.flatMap({ destination.entity(named: $0) }),
              destination.ancestry(of: made).contains(where: { $0.name == relationship.destination }) else {
            throw failure(
                "entity mapping \(name) makes \(mapping.destinationEntity ?? "no objects"), but relationship '\(relationship.name)' holds \(relationship.destination)",
                keyPath: keyPath
            )
        }
    }

    /// For `$source.chef`: the FUNCTION form with the entity mapping that fits, when one does.
    private func relationshipHint(for expression: ValueExpression, _ relationship: Relationship) -> String {
        var keyPath = "$source.<relationship>"
        var mappingName = "<EntityMapping>"
        if case .keyPath(.source, _) = expression {
            keyPath = expression.description
            let fitting = checker.entityMappings.filter { $0.destinationEntity == relationship.destination }
            if fitting.count == 1 { mappingName = fitting[0].name }
        }
        return "write FUNCTION($manager, \"\(ValueExpression.destinationInstancesSelector)\", \"\(mappingName)\", \(keyPath))"
    }
}
