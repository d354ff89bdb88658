import ObjectModel

/// One expression being checked: where it is, for the messages.
struct Site {
    let checker: ExpressionChecker
    /// The destination property; nil for the filter.
    let property: String?
    let expression: String

    var source: ModelVersion { checker.source }

    func failure(_ message: String, keyPath: String? = nil, hint: String? = nil) -> ExpressionCheckError {
        ExpressionCheckError(
            entityMapping: checker.entityMapping.name, property: property, expression: expression, keyPath: keyPath,
            message: message, hint: hint
        )
    }

    // MARK: Values

    /// The typed node of an expression in a value position.
    func value(_ expression: ValueExpression) throws(ExpressionCheckError) -> TypedNode {
        switch expression {
        case .constant(let value):
            return .constant(value, ValueType(of: value))
        case .variable(let variable):
            throw variableAlone(variable)
        case .keyPath(let variable, let path):
            guard variable == .source else {
                throw failure(
                    "only $source key paths can be read", keyPath: expression.description,
                    hint: "pass $\(variable.rawValue) to a policy function: FUNCTION($entityPolicy, \"selector:\", $\(variable.rawValue))"
                )
            }
            let reference = try attribute(at: path)
            return .attribute(reference, ValueType(reference.attribute.type) ?? .unknown)
        case .negate(let operand):
            let node = try value(operand)
            guard node.type.isNumeric else { throw notNumeric(operand, node.type, operation: "'-'") }
            return .negate(node, node.type.isInteger ? .integer64 : node.type)
        case .arithmetic(let op, let left, let right):
            var leftNode = try value(left)
            var rightNode = try value(right)
            guard leftNode.type.isNumeric else { throw notNumeric(left, leftNode.type, operation: "'\(op.rawValue)'") }
            guard rightNode.type.isNumeric else { throw notNumeric(right, rightNode.type, operation: "'\(op.rawValue)'") }
            (leftNode, rightNode) = adoptingDecimal(leftNode, rightNode)
            return .arithmetic(op, leftNode, rightNode, ValueType.arithmetic(op, leftNode.type, rightNode.type))
        case .builtin(let function, let arguments):
            return try builtin(function, arguments)
        case .function(let target, let selector, let arguments):
            if selector == ValueExpression.destinationInstancesSelector {
                throw failure(
                    "\(selector) gives objects, not a value",
                    hint: "use it in a relationship mapping; an attribute takes a value such as $source.<attribute>"
                )
            }
            let variable = try functionTarget(target)
            var typedArguments: [TypedArgument] = []
            for argument in arguments {
                typedArguments.append(try functionArgument(argument))
            }
            return .function(target: variable, selector: selector, arguments: typedArguments)
        case .list:
            throw failure("a list {…} can only be the right side of IN")
        }
    }

    private func builtin(_ function: BuiltinFunction, _ arguments: [ValueExpression]) throws(ExpressionCheckError) -> TypedNode {
        precondition(arguments.count == function.arity, "\(function.rawValue) takes \(function.arity) arguments")
        var nodes: [TypedNode] = []
        for argument in arguments {
            nodes.append(try value(argument))
        }
        switch function {
        case .uppercase, .lowercase, .trim, .length:
            guard nodes[0].type == .string else {
                throw failure(
                    "\(function.rawValue) needs a String, but \(arguments[0]) is \(nodes[0].type)",
                    keyPath: keyPathText(arguments[0])
                )
            }
            return .builtin(function, nodes, function == .length ? .integer32 : .string)
        case .abs:
            guard nodes[0].type.isNumeric else { throw notNumeric(arguments[0], nodes[0].type, operation: "abs:") }
            return .builtin(function, nodes, nodes[0].type)
        case .now:
            return .builtin(function, nodes, .date)
        }
    }

    private func functionTarget(_ target: ValueExpression) throws(ExpressionCheckError) -> Variable {
        guard case .variable(let variable) = target else {
            throw failure(
                "the target of FUNCTION must be a variable, not \(target)",
                hint: "call a policy function: FUNCTION($entityPolicy, \"selector:\", …)"
            )
        }
        if variable == .entityPolicy, checker.entityMapping.policy == nil {
            throw failure(
                "FUNCTION($entityPolicy, …) needs a custom policy, and entity mapping \(checker.entityMapping.name) names none",
                hint: "name the policy in the entity mapping (policy: <Name>)"
            )
        }
        return variable
    }

    private func functionArgument(_ argument: ValueExpression) throws(ExpressionCheckError) -> TypedArgument {
        if case .variable(let variable) = argument { return .variable(variable) }
        // A to-one relationship on its own passes the related object (Core Data passes the
        // managed object; the policy gets its entity and key).
        if case .keyPath(.source, let path) = argument, let (relationships, target) = try? self.relationships(at: path),
           let last = relationships.last, !last.isToMany {
            return .object(ObjectReference(relationships: path, entity: target.name))
        }
        return .value(try value(argument))
    }

    /// A fractional literal next to a Decimal is a Decimal, so `$source.price * 1.1` stays exact.
    func adoptingDecimal(_ left: TypedNode, _ right: TypedNode) -> (TypedNode, TypedNode) {
        if left.type == .decimal, let adopted = decimalLiteral(right) { return (left, adopted) }
        if right.type == .decimal, let adopted = decimalLiteral(left) { return (adopted, right) }
        return (left, right)
    }

    private func decimalLiteral(_ node: TypedNode) -> TypedNode? {
        switch node {
        case .constant(.double(let d), _):
            return Value.decimal(normalizing: String(d)).map { .constant($0, .decimal) }
        case .negate(let operand, _):
            return decimalLiteral(operand).map { .negate($0, .decimal) }
        default:
            return nil
        }
    }

    /// Whether the value fits the destination attribute (see `ValueType.isAssignable(to:)`).
    func checkStorable(_ node: TypedNode, in attribute: Attribute, as destinationType: ValueType) throws(ExpressionCheckError) {
        let type = node.type
        if type == .null {
            guard attribute.isOptional else {
                throw failure("nil cannot be stored in non-optional attribute '\(attribute.name)'")
            }
            return
        }
        guard type.isAssignable(to: attribute.type) else {
            let loss = type.isNumeric && destinationType.isInteger ? ": the fraction would be lost" : ""
            throw failure(
                "\(type.withArticle) value cannot be stored in \(attribute.type.rawValue) attribute '\(attribute.name)'\(loss)",
                keyPath: node.keyPathText
            )
        }
        if case .constant(.int(let i), _) = node, let range = integerRange(attribute.type), !range.contains(i) {
            throw failure("\(i) is out of range for \(attribute.type.rawValue) attribute '\(attribute.name)'")
        }
    }

    private func integerRange(_ type: AttributeType) -> ClosedRange<Int64>? {
        switch type {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        default: nil
        }
    }

    func variableAlone(_ variable: Variable) -> ExpressionCheckError {
        if variable == .source {
            return failure("$source is the source object, not a value", hint: "name one of its attributes: $source.<attribute>")
        }
        return failure(
            "$\(variable.rawValue) has no value of its own",
            hint: "$\(variable.rawValue) can only be the target or an argument of FUNCTION"
        )
    }

    func notNumeric(_ operand: ValueExpression, _ type: ValueType, operation: String) -> ExpressionCheckError {
        if type == .unknown {
            return failure(
                "\(operation) needs numbers, and a policy function's result is known only when it runs",
                hint: "do the arithmetic inside the function"
            )
        }
        return failure("\(operation) needs numbers, but \(operand) is \(type)", keyPath: keyPathText(operand))
    }

    func keyPathText(_ expression: ValueExpression) -> String? {
        if case .keyPath = expression { return expression.description }
        return nil
    }
}

extension TypedNode {
    /// `$source.a.b` when the node is a key path.
    var keyPathText: String? {
        guard case .attribute(let reference, _) = self else { return nil }
        return ValueExpression.keyPath(.source, reference.relationships + [reference.attribute.name]).description
    }
}
