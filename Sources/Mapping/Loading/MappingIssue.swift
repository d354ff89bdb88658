import ObjectModel

/// A problem found in a mapping model file, located as precisely as we know: file, line, entity
/// mapping, property.
public struct MappingIssue: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    /// The column on `line`, for native (YAML, JSON) mapping models.
    public var column: Int?
    public var entityMapping: String?
    public var property: String?
    public var message: String

    public init(file: String, line: Int? = nil, column: Int? = nil, entityMapping: String? = nil, property: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.entityMapping = entityMapping
        self.property = property
        self.message = message
    }

    /// One line: `file:line:column: entity mapping RecipeToRecipe, property author: message`.
    public var description: String {
        locatedMessage(
            file: file, line: line, column: column,
            location: [entityMapping.map { "entity mapping \($0)" }, property.map { "property \($0)" }], message: message
        )
    }
}

/// Loading mapping models failed; every problem found is listed.
public struct MappingLoadError: Error, Sendable, CustomStringConvertible {
    public var issues: [MappingIssue]

    public init(_ issues: [MappingIssue]) {
        self.issues = issues
    }

    public var description: String {
        issues.map(\.description).joined(separator: "\n")
    }
}
