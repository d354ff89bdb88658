extension ModelValidator {
    /// Stable codes of the warnings below.
    public enum WarningCode {
        /// A relationship names an inverse that names another relationship as its own inverse.
        public static let inverseNotMutual = "inverse-not-mutual"
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
        }
        return warnings
    }
}
