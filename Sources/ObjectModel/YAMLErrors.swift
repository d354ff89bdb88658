import Foundation
import Yams

/// What went wrong in a YAML text Yams could not compose, with the line where it did.
public struct YAMLSyntaxProblem: Sendable, Hashable {
    public var line: Int?
    /// Known for a duplicate key only: libyaml's syntax errors are found where it gave up, often
    /// past the mistake, so a column would point precisely at the wrong place.
    public var column: Int?
    public var message: String

    /// libyaml's limit (`MAX_NESTING_LEVEL`), which Yams keeps.
    static let maximumNesting = 1000

    /// Duplicate keys name the keys, at the first one's line and column; scanner, parser and
    /// composer errors keep Yams' problem text and line, except libyaml's nesting limit, which
    /// names its setter; reader errors (bytes that are not text) get their line; anything else
    /// is Yams' description on one line.
    public init(_ error: YamlError) {
        switch error {
        case .duplicatedKeysInMapping(let duplicates, let context):
            (line, column) = (context.mark.line, context.mark.column)
            message = "duplicate key " + duplicates.map { "'\($0)'" }.joined(separator: ", ")
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _), .composer(_, let problem, let mark, _):
            line = mark.line
            message = problem.hasPrefix("Maximum nesting level reached")
                ? "malformed YAML: lists and mappings nested deeper than \(Self.maximumNesting) levels"
                : "malformed YAML: \(problem)"
        case .reader(let problem, let offset, _, let yaml):
            line = offset.map { offset in 1 + yaml.prefix(offset).filter(\.isNewline).count }
            message = "malformed YAML: \(problem)" + (offset.map { " (character \($0 + 1))" } ?? "")
        default:
            line = nil
            message = "malformed YAML: " + oneLine(String(describing: error))
        }
    }
}
