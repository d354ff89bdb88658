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
