import ObjectModel

extension ExpressionChecker {
    /// Checks the entity mapping's source filter against the source version. Filters run in
    /// the database, so they cannot call policy functions.
    public func checkFilter(_ predicate: FilterPredicate) throws(ExpressionCheckError) -> CheckedPredicate {
        let site = Site(checker: self, property: nil, expression: predicate.description)
        let node = try site.predicate(predicate)
        let references = uniqued(node.attributeReferences)
        return CheckedPredicate(predicate: predicate, attributes: references, joins: toOneJoins(for: references), node: node)
    }
}

extension Site {
    func predicate(_ predicate: FilterPredicate) throws(ExpressionCheckError) -> TypedPredicate {
        switch predicate {
        case .constant(let value):
            return .constant(value)
        case .and(let left, let right):
            return .and(try self.predicate(left), try self.predicate(right))
        case .or(let left, let right):
            return .or(try self.predicate(left), try self.predicate(right))
        case .not(let operand):
            return .not(try self.predicate(operand))
        case .comparison(let comparison):
            return .comparison(try self.comparison(comparison))
        }
    }

    private func comparison(_ c: Comparison) throws(ExpressionCheckError) -> TypedComparison {
        var left = try filterValue(c.left)
        let op = c.op.rawValue
        if c.isCaseInsensitive, left.type != .string, left.type != .null {
            throw failure("\(op)[c] compares strings, but \(c.left) is \(left.type)", keyPath: left.keyPathText)
        }
        if c.op == .in {
            guard case .list(let items) = c.right else {
                throw failure("the right side of IN must be a list such as {1, 2}", hint: "to compare with one value, use ==")
            }
            guard !items.isEmpty else { throw failure("IN {} is always false: give at least one item") }
            var typed: [TypedNode] = []
            for item in items {
                var node = try filterValue(item)
                guard node.type != .null else { throw failure("nil in an IN list is not supported", hint: "use == nil") }
                (left, node) = adoptingDecimal(left, node)
                try requireComparable(left, node, c)
                typed.append(node)
            }
            return TypedComparison(left: left, op: c.op, right: typed, isCaseInsensitive: c.isCaseInsensitive)
        }
        var right = try filterValue(c.right)
        (left, right) = adoptingDecimal(left, right)
        if c.op.isStringMatch {
            guard left.type == .string else {
                throw failure("\(op) needs a String on the left, but \(c.left) is \(left.type)", keyPath: left.keyPathText)
            }
            guard case .constant(.string, _) = right else {
                throw failure("the right side of \(op) must be a string constant, not \(c.right)")
            }
        } else {
            if c.isCaseInsensitive, right.type != .string, right.type != .null {
                throw failure("\(op)[c] compares strings, but \(c.right) is \(right.type)", keyPath: right.keyPathText)
            }
            try requireComparable(left, right, c)
        }
        return TypedComparison(left: left, op: c.op, right: [right], isCaseInsensitive: c.isCaseInsensitive)
    }

    private func requireComparable(_ left: TypedNode, _ right: TypedNode, _ c: Comparison) throws(ExpressionCheckError) {
        let op = c.op == .in ? "IN" : c.op.rawValue
        if c.op.isOrdering, left.type == .null || right.type == .null {
            throw failure("'\(op)' cannot compare with nil", hint: "use == nil or != nil")
        }
        let fits = c.op.isOrdering ? left.type.isOrderable(with: right.type) : left.type.isEquatable(with: right.type)
        guard fits else {
            throw failure(
                "'\(op)' cannot compare \(left.type) with \(right.type)", keyPath: left.keyPathText ?? right.keyPathText
            )
        }
    }

    /// A value in a filter: no policy functions, no lists outside IN.
    private func filterValue(_ expression: ValueExpression) throws(ExpressionCheckError) -> TypedNode {
        if containsFunction(expression) {
            throw failure(
                "a filter cannot call policy functions: it runs in the database",
                hint: "filter in the policy's createDestinationInstances instead"
            )
        }
        return try value(expression)
    }

    private func containsFunction(_ expression: ValueExpression) -> Bool {
        switch expression {
        case .function: true
        case .constant, .variable, .keyPath: false
        case .negate(let operand): containsFunction(operand)
        case .arithmetic(_, let left, let right): containsFunction(left) || containsFunction(right)
        case .builtin(_, let arguments), .list(let arguments): arguments.contains(where: containsFunction)
        }
    }
}

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
