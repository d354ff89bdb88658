import Foundation
import Yams

/// The places inside a file that a reader's issues name beside file, line and column (entity
/// and property in a model version; entity mapping and property in a mapping model), and the
/// issue type they make.
public protocol YAMLLocation: Sendable {
    associatedtype Issue: Error
    /// The file as a whole.
    init()
    func issue(file: String, line: Int?, column: Int?, message: String) -> Issue
}

/// Walks a composed YAML (or JSON) document, turning every shape mismatch into an issue located
/// at the node's line and column, inside the places `location` names. Model versions and
/// mapping models are read by it, so both formats report the same mistake the same way.
public struct YAMLReader<Location: YAMLLocation> {
    public let file: String
    public var location: Location

    public init(file: String, location: Location = Location()) {
        self.file = file
        self.location = location
    }

    /// The same file, inside `location`.
    public func at(_ location: Location) -> YAMLReader {
        YAMLReader(file: file, location: location)
    }

    public func issue(_ message: String, at node: Node?) -> Location.Issue {
        location.issue(file: file, line: node?.mark?.line, column: node?.mark?.column, message: message)
    }

    /// The text of the file at `path`, which must be UTF-8.
    public static func readText(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Location().issue(file: path, line: nil, column: nil, message: "cannot read the file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Location().issue(file: path, line: nil, column: nil, message: "the file is not UTF-8 text")
        }
        return text
    }

    /// The document's root node. An empty file, malformed YAML, a key written twice in one
    /// mapping (`YAMLSyntaxProblem`) and a tag YAML's core schema does not have
    /// (`YAMLTags.firstUnknown`) are issues of the file as a whole.
    public static func compose(_ text: String, file: String) throws -> Node {
        do {
            guard let node = try Yams.compose(yaml: text) else {
                throw Location().issue(file: file, line: nil, column: nil, message: "the file is empty")
            }
            if let unknown = YAMLTags.firstUnknown(in: node) {
                throw Location().issue(
                    file: file, line: unknown.mark?.line, column: unknown.mark?.column,
                    message: "unknown YAML tag '\(YAMLTags.shorthand(unknown.tag))': only the core schema's (str, int, float, bool, null, seq, map) are read"
                )
            }
            return node
        } catch let error as YamlError {
            let problem = YAMLSyntaxProblem(error)
            throw Location().issue(file: file, line: problem.line, column: problem.column, message: problem.message)
        }
    }

    /// The mapping's pairs in file order, rejecting keys outside `allowed`, and a key written
    /// twice as different scalars (`1` and `'1'`: Yams rejects only equal ones while composing),
    /// at the first one's place, as Yams does.
    public func mapping(_ node: Node, what: String, allowed: Set<String>? = nil) throws -> [(key: String, keyNode: Node, value: Node)] {
        guard let mapping = node.mapping else {
            throw issue("\(what) must be a mapping", at: node)
        }
        var pairs: [(key: String, keyNode: Node, value: Node)] = []
        var seen: [String: Node] = [:]
        for (keyNode, value) in mapping {
            guard let key = keyNode.scalar?.string else {
                throw issue("\(what) has a key that is not a string", at: keyNode)
            }
            if let allowed, !allowed.contains(key) {
                throw issue("unknown key '\(key)' in \(what) (expected one of: \(allowed.sorted().joined(separator: ", ")))", at: keyNode)
            }
            if let first = seen[key] {
                throw issue("duplicate key '\(key)'", at: first)
            }
            seen[key] = keyNode
            pairs.append((key, keyNode, value))
        }
        return pairs
    }

    public func string(_ node: Node, what: String) throws -> String {
        guard let scalar = node.scalar else {
            throw issue("\(what) must be a string", at: node)
        }
        return scalar.string
    }

    /// A string with more than blanks in it.
    public func nonEmptyString(_ node: Node, what: String) throws -> String {
        let text = try string(node, what: what)
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw issue("\(what) is empty", at: node)
        }
        return text
    }

    /// Nil for YAML null (plain `~`, `null` or nothing), else `read`'s string.
    public func optional(_ node: Node, what: String, _ read: (Node, String) throws -> String) throws -> String? {
        if let scalar = node.scalar, scalar.style == .plain, ["", "~", "null", "Null", "NULL"].contains(scalar.string) {
            return nil
        }
        return try read(node, what)
    }

    public func optionalString(_ node: Node, what: String) throws -> String? {
        try optional(node, what: what, string)
    }

    public func bool(_ node: Node, what: String) throws -> Bool {
        switch node.scalar?.string.lowercased() {
        case "true", "yes": return true
        case "false", "no": return false
        default: throw issue("\(what) must be true or false", at: node)
        }
    }

    public func int(_ node: Node, what: String) throws -> Int {
        guard let text = node.scalar?.string, let value = Int(text), value >= 0 else {
            throw issue("\(what) must be a whole number of at least 0", at: node)
        }
        return value
    }

    public func strings(_ node: Node, what: String) throws -> [String] {
        if let scalar = node.scalar { return [scalar.string] }
        guard let sequence = node.sequence else {
            throw issue("\(what) must be a list of strings", at: node)
        }
        return try sequence.map { try string($0, what: what) }
    }

    public func stringMap(_ node: Node, what: String) throws -> [String: String] {
        var result: [String: String] = [:]
        for pair in try mapping(node, what: what) {
            result[pair.key] = try string(pair.value, what: "\(what) value '\(pair.key)'")
        }
        return result
    }
}

/// A model version's places: entity and property.
public struct ModelLocation: YAMLLocation {
    public var entity: String?
    public var property: String?

    public init() {}

    public init(entity: String?, property: String?) {
        self.entity = entity
        self.property = property
    }

    public func issue(file: String, line: Int?, column: Int?, message: String) -> ModelIssue {
        ModelIssue(file: file, line: line, column: column, entity: entity, property: property, message: message)
    }
}

typealias ModelYAMLReader = YAMLReader<ModelLocation>

extension YAMLReader where Location == ModelLocation {
    func at(entity: String? = nil, property: String? = nil) -> YAMLReader {
        at(ModelLocation(entity: entity ?? location.entity, property: property ?? location.property))
    }
}

func oneLine(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
}
