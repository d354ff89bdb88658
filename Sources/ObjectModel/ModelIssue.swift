/// A problem found in a model file, located as precisely as we know: file, line, entity, property.
public struct ModelIssue: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable {
        case error
        case warning
    }

    public var severity: Severity
    public var file: String
    public var line: Int?
    /// The column on `line`, for files read by `YAMLReader`.
    public var column: Int?
    public var entity: String?
    public var property: String?
    public var message: String
    /// A stable code scripts can match on, for problems that have one (`inverse-not-mutual`).
    public var code: String?

    public init(
        _ severity: Severity = .error, file: String, line: Int? = nil, column: Int? = nil, entity: String? = nil,
        property: String? = nil, message: String, code: String? = nil
    ) {
        self.severity = severity
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.entity = entity
        self.property = property
        self.message = message
    }

    /// One line: `file:line:column: entity Recipe, property name: message [code]`.
    public var description: String {
        locatedMessage(file: file, line: line, column: column, location: [entity.map { "entity \($0)" }, property.map { "property \($0)" }], message: message)
            + (code.map { " [\($0)]" } ?? "")
    }
}

/// `file:line:column: <location, …>: message`, the one shape of every located problem we print
/// (model files, mapping model files), as compilers print theirs; the column only when known
/// (YAML and JSON files; XML parsers give the line only).
public func locatedMessage(file: String, line: Int?, column: Int? = nil, location: [String?], message: String) -> String {
    let place = location.compactMap { $0 }
    let position = line.map { ":\($0)" + (column.map { ":\($0)" } ?? "") } ?? ""
    return file + position + ": " + (place.isEmpty ? "" : place.joined(separator: ", ") + ": ") + message
}

/// Loading or validating a model failed; every problem is listed.
public struct ModelLoadError: Error, Sendable, CustomStringConvertible {
    public var issues: [ModelIssue]

    public init(_ issues: [ModelIssue]) {
        self.issues = issues
    }

    public var description: String {
        issues.map(\.description).joined(separator: "\n")
    }
}
