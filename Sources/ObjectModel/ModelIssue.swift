/// A problem found in a model file, located as precisely as we know: file, line, entity, property.
public struct ModelIssue: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable {
        case error
        case warning
    }

    public var severity: Severity
    public var file: String
    public var line: Int?
    public var entity: String?
    public var property: String?
    public var message: String
    /// A stable code scripts can match on, for problems that have one (`inverse-not-mutual`).
    public var code: String?

    public init(
        _ severity: Severity = .error, file: String, line: Int? = nil, entity: String? = nil,
        property: String? = nil, message: String, code: String? = nil
    ) {
        self.severity = severity
        self.code = code
        self.file = file
        self.line = line
        self.entity = entity
        self.property = property
        self.message = message
    }

    /// One line: `file:line: entity Recipe, property name: message [code]`.
    public var description: String {
        locatedMessage(file: file, line: line, location: [entity.map { "entity \($0)" }, property.map { "property \($0)" }], message: message)
            + (code.map { " [\($0)]" } ?? "")
    }
}

/// `file:line: <location, …>: message`, the one shape of every located problem we print
/// (model files, mapping model files).
public func locatedMessage(file: String, line: Int?, location: [String?], message: String) -> String {
    let place = location.compactMap { $0 }
    return file + (line.map { ":\($0)" } ?? "") + ": " + (place.isEmpty ? "" : place.joined(separator: ", ") + ": ") + message
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
