/// A value expression in NSExpression's format syntax, as parsed by `ExpressionParser` (or built
/// directly, e.g. from an archived NSExpression). It says what to compute; `ExpressionChecker`
/// decides whether that makes sense for two model versions.
public indirect enum ValueExpression: Sendable, Hashable {
    /// A number, string, `YES`/`NO` or `nil`.
    case constant(Value)
    /// A variable on its own: `$source`, `$manager`, …
    case variable(Variable)
    /// `$source.chef.name`: property names after a variable, without their `#` escapes.
    case keyPath(Variable, [String])
    /// Unary minus.
    case negate(ValueExpression)
    case arithmetic(ArithmeticOperator, ValueExpression, ValueExpression)
    /// A built-in function in NSExpression's syntax: `uppercase:($source.name)`, `now()`.
    case builtin(BuiltinFunction, [ValueExpression])
    /// `FUNCTION(target, "selector:", arguments…)`.
    case function(target: ValueExpression, selector: String, arguments: [ValueExpression])
    /// `{1, 2, 3}`, the right side of `IN`.
    case list([ValueExpression])

    /// The selector Core Data's default relationship mappings call on `$manager`.
    public static let destinationInstancesSelector = "destinationInstancesForEntityMappingNamed:sourceInstances:"

    /// A call of NSExpression's built-in functions by selector, as archived expressions spell
    /// them: `uppercase:`, `now`, and the arithmetic `add:to:`, `from:subtract:`, `multiply:by:`,
    /// `divide:by:`; nil for a selector that is not supported or a wrong number of arguments.
    public static func builtinCall(selector: String, arguments: [ValueExpression]) -> ValueExpression? {
        if let function = BuiltinFunction(rawValue: selector) {
            return arguments.count == function.arity ? .builtin(function, arguments) : nil
        }
        let arithmetic: [String: ArithmeticOperator] = [
            "add:to:": .add, "from:subtract:": .subtract, "multiply:by:": .multiply, "divide:by:": .divide,
        ]
        guard let op = arithmetic[selector], arguments.count == 2 else { return nil }
        return .arithmetic(op, arguments[0], arguments[1])
    }
}

/// The six variables of a mapping's expressions (NSMigrationManager's keys).
public enum Variable: String, Sendable, Hashable, CaseIterable {
    case manager
    case source
    case destination
    case entityMapping
    case propertyMapping
    case entityPolicy
}

public enum ArithmeticOperator: String, Sendable, Hashable, CaseIterable {
    case add = "+"
    case subtract = "-"
    case multiply = "*"
    case divide = "/"

    /// Binding strength: `*` and `/` bind tighter than `+` and `-`.
    var precedence: Int { self == .add || self == .subtract ? 1 : 2 }
}

/// The built-in functions we support, by their NSExpression selector.
public enum BuiltinFunction: String, Sendable, Hashable, CaseIterable {
    case uppercase = "uppercase:"
    case lowercase = "lowercase:"
    case abs = "abs:"
    /// Number of characters (Unicode scalars, as PostgreSQL counts them).
    case length = "length:"
    /// Removes spaces, tabs, carriage returns and newlines at both ends. Ours, not NSExpression's.
    case trim = "trim:"
    /// The time the migration runs.
    case now = "now"

    public var arity: Int { self == .now ? 0 : 1 }
}
