/// An expression that parses but does not fit the models: found at plan time, before anything
/// runs. Names the entity mapping, the destination property (or the filter), the key path at
/// fault and what to do.
public struct ExpressionCheckError: Error, Sendable, Hashable, CustomStringConvertible {
    public var entityMapping: String
    /// The destination property; nil for the entity mapping's filter.
    public var property: String?
    /// The expression or predicate, as the parser prints it.
    public var expression: String
    /// The key path at fault, as written (`$source.chef.name`), when there is one.
    public var keyPath: String?
    public var message: String
    public var hint: String?

    public init(
        entityMapping: String, property: String?, expression: String, keyPath: String? = nil, message: String,
        hint: String? = nil
    ) {
        self.entityMapping = entityMapping
        self.property = property
        self.expression = expression
        self.keyPath = keyPath
        self.message = message
        self.hint = hint
    }

    /// `entity mapping RecipeToRecipe, property temperatureC: $source.temprature: Recipe has
    /// no property 'temprature'`, then the expression and the hint on lines of their own.
    public var description: String {
        let place = property.map { "property \($0)" } ?? "filter"
        var text = "entity mapping \(entityMapping), \(place): " + (keyPath.map { "\($0): " } ?? "") + message
        text += "\n  in: \(expression)"
        if let hint { text += "\n  hint: \(hint)" }
        return text
    }
}
