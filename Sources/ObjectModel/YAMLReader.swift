import Yams
import Foundation

/// Walks a composed YAML document, turning every shape mismatch into a located `ModelIssue`.
struct YAMLReader {
    let file: String
    var entity: String?
    var property: String?

    init(file: String, entity: String? = nil, property: String? = nil) {
        self.file = file
        self.entity = entity
        self.property = property
    }

    func at(entity: String? = nil, property: String? = nil) -> YAMLReader {
        YAMLReader(file: file, entity: entity ?? self.entity, property: property ?? self.property)
    }

    func issue(_ message: String, at node: Node?) -> ModelIssue {
        ModelIssue(file: file, line: node?.mark.map(\.line), entity: entity, property: property, message: message)
    }

    static func compose(_ text: String, file: String) throws -> Node {
        do {
            guard let node = try Yams.compose(yaml: text) else {
                throw ModelIssue(file: file, message: "the file is empty")
            }
            return node
        } catch let error as YamlError {
            let problem = YAMLSyntaxProblem(error)
            throw ModelIssue(file: file, line: problem.line, message: problem.message)
        }
    }

    /// The mapping's pairs in file order, rejecting keys outside `allowed`.
    func mapping(_ node: Node, what: String, allowed: Set<String>? = nil) throws -> [(key: String, node: Node, value: Node)] {
        guard let mapping = node.mapping else {
            throw issue("\(what) must be a mapping", at: node)
        }
        var pairs: [(key: String, node: Node, value: Node)] = []
        var seen: Set<String> = []
        for (keyNode, value) in mapping {
            guard let key = keyNode.scalar?.string else {
                throw issue("\(what) has a key that is not a string", at: keyNode)
            }
            if let allowed, !allowed.contains(key) {
                throw issue("unknown key '\(key)' in \(what) (expected one of: \(allowed.sorted().joined(separator: ", ")))", at: keyNode)
            }
            if !seen.insert(key).inserted {
                throw issue("duplicate key '\(key)' in \(what)", at: keyNode)
            }
            pairs.append((key, keyNode, value))
        }
        return pairs
    }

    func string(_ node: Node, what: String) throws -> String {
        guard let scalar = node.scalar else {
            throw issue("\(what) must be a string", at: node)
        }
        return scalar.string
    }

    func optionalString(_ node: Node, what: String) throws -> String? {
        if let scalar = node.scalar, scalar.style == .plain, ["", "~", "null", "Null", "NULL"].contains(scalar.string) {
            return nil
        }
        return try string(node, what: what)
    }

    func bool(_ node: Node, what: String) throws -> Bool {
        switch node.scalar?.string.lowercased() {
        case "true", "yes": return true
        case "false", "no": return false
        default: throw issue("\(what) must be true or false", at: node)
        }
    }

    func int(_ node: Node, what: String) throws -> Int {
        guard let text = node.scalar?.string, let value = Int(text), value >= 0 else {
            throw issue("\(what) must be a whole number of at least 0", at: node)
        }
        return value
    }

    func strings(_ node: Node, what: String) throws -> [String] {
        if let scalar = node.scalar { return [scalar.string] }
        guard let sequence = node.sequence else {
            throw issue("\(what) must be a list of strings", at: node)
        }
        return try sequence.map { try string($0, what: what) }
    }

    func stringMap(_ node: Node, what: String) throws -> [String: String] {
        var result: [String: String] = [:]
        for pair in try mapping(node, what: what) {
            result[pair.key] = try string(pair.value, what: "\(what) value '\(pair.key)'")
        }
        return result
    }
}

func oneLine(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
}
