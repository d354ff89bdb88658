extension ModelValidator {
    /// Stable codes of the warnings below.
    public enum WarningCode {
        /// A relationship names an inverse that names another relationship as its own inverse.
        public static let inverseNotMutual = "inverse-not-mutual"
        /// A transient property is non-optional without a default value.
        public static let transientRequired = "transient-required"
    }

    /// What Xcode compiles with a warning and the store lays out anyway (docs/store-format.md):
    /// reported, never refused.
    public static func warnings(_ version: ModelVersion) -> [ModelIssue] {
        var warnings: [ModelIssue] = []
        for entity in version.entities {
            for relationship in entity.relationships {
                guard let inverse = version.declaredInverse(of: relationship), let back = inverse.inverse,
                      back != relationship.name else { continue }
                warnings.append(ModelIssue(
                    .warning, file: version.sourceFile, entity: entity.name, property: relationship.name,
                    message: "its inverse \(relationship.destination).\(inverse.name) names '\(back)' as its own inverse; stored as a relationship without an inverse",
                    code: WarningCode.inverseNotMutual
                ))
            }
            // Core Data validates a transient property at every save, but no column holds it:
            // nothing here can give it a value, and Xcode compiles such a model.
            let required = entity.attributes.filter { $0.isTransient && !$0.isOptional && $0.defaultValue == nil }.map(\.name)
                + entity.relationships.filter { $0.isTransient && !$0.isOptional }.map(\.name)
            for name in required {
                warnings.append(ModelIssue(
                    .warning, file: version.sourceFile, entity: entity.name, property: name,
                    message: "transient and non-optional without a default value: the store has no column for it, so only the application can give it the value every save requires (make it optional, or give it a default)",
                    code: WarningCode.transientRequired
                ))
            }
        }
        return warnings
    }
}
