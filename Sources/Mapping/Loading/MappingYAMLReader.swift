import Foundation
import Yams
import ObjectModel

/// Walks a composed YAML document of a mapping file, turning every shape mismatch into a
/// `MappingIssue` located at the node's line, inside the entity mapping and property being read.
struct MappingYAMLReader {
    let file: String
    var entityMapping: String?
    var property: String?

    func at(entityMapping: String? = nil, property: String? = nil) -> MappingYAMLReader {
        MappingYAMLReader(file: file, entityMapping: entityMapping ?? self.entityMapping, property: property ?? self.property)
    }

    func issue(_ message: String, at node: Node?) -> MappingIssue {
        MappingIssue(file: file, line: node?.mark.map(\.line), entityMapping: entityMapping, property: property, message: message)
    }

    static func compose(_ text: String, file: String) throws -> Node {
        do {
            guard let node = try Yams.compose(yaml: text) else {
                throw MappingIssue(file: file, message: "the file is empty")
            }
            return node
        } catch let error as YamlError {
            let problem = YAMLSyntaxProblem(error)
            throw MappingIssue(file: file, line: problem.line, message: problem.message)
        }
    }

    /// The mapping's pairs in file order, rejecting keys outside `allowed`. (Yams already
    /// rejects duplicate keys while composing.)
    func mapping(_ node: Node, what: String, allowed: Set<String>? = nil) throws -> [(key: String, keyNode: Node, value: Node)] {
        guard let mapping = node.mapping else {
            throw issue("\(what) must be a mapping", at: node)
        }
        var pairs: [(key: String, keyNode: Node, value: Node)] = []
        for (keyNode, value) in mapping {
            guard let key = keyNode.scalar?.string else {
                throw issue("\(what) has a key that is not a string", at: keyNode)
            }
            if let allowed, !allowed.contains(key) {
                throw issue("unknown key '\(key)'", at: keyNode)
            }
            pairs.append((key, keyNode, value))
        }
        return pairs
    }

    /// A non-empty string.
    func name(_ node: Node, what: String) throws -> String {
        guard let scalar = node.scalar else {
            throw issue("'\(what)' must be a string", at: node)
        }
        guard !scalar.string.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw issue("'\(what)' is empty", at: node)
        }
        return scalar.string
    }

    /// A value expression: nil for YAML null (the Xcode default), else non-empty text.
    func expression(_ node: Node, what: String) throws -> String? {
        if let scalar = node.scalar, scalar.style == .plain, ["", "~", "null", "Null", "NULL"].contains(scalar.string) {
            return nil
        }
        guard let scalar = node.scalar else {
            throw issue("\(what) must be a string", at: node)
        }
        guard !scalar.string.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw issue("\(what) is empty", at: node)
        }
        return scalar.string
    }
}
