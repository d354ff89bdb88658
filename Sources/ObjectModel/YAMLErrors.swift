import Foundation
import Yams

/// What went wrong in a YAML text Yams could not compose, with the line where it did.
public struct YAMLSyntaxProblem: Sendable, Hashable {
    public var line: Int?
    public var message: String

    /// Duplicate keys name the keys; scanner, parser and composer errors keep Yams' problem
    /// text and line; anything else is Yams' description on one line.
    public init(_ error: YamlError) {
        switch error {
        case .duplicatedKeysInMapping(let duplicates, let context):
            line = context.mark.line
            message = "duplicate key " + duplicates.map { "'\($0)'" }.joined(separator: ", ")
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _), .composer(_, let problem, let mark, _):
            line = mark.line
            message = "malformed YAML: \(problem)"
        default:
            line = nil
            message = "malformed YAML: " + oneLine(String(describing: error))
        }
    }
}
