import Yams

/// The tags a model or mapping file may carry: those YAML's core schema resolves plain values
/// to, written or implied. Any other (`!!python/object`, `!custom`, `!!binary`) asks for a type
/// this tool has not, and is refused rather than read as the text it tags.
enum YAMLTags {
    static let known: Set<String> = [Tag.Name.str, .int, .float, .bool, .null, .seq, .map, .merge, .timestamp, .value].map(\.rawValue).reduce(into: []) { $0.insert($1) }

    /// The first node, in document order, whose tag is not `known`. A node an alias repeats
    /// (the anchored node's own mark) is looked at once, so aliases cannot make the walk long.
    static func firstUnknown(in root: Node) -> Node? {
        var seen: Set<String> = []
        var pending = [root]
        while let node = pending.popLast() {
            if node.anchor != nil, let mark = node.mark {
                guard seen.insert("\(mark.line):\(mark.column)").inserted else { continue }
            }
            if !known.contains(node.tag.rawValue) { return node }
            switch node {
            case .mapping(let mapping): pending += mapping.reversed().flatMap { [$0.value, $0.key] }
            case .sequence(let sequence): pending += sequence.reversed()
            case .scalar, .alias: break
            }
        }
        return nil
    }

    /// `tag:yaml.org,2002:python/object` as it is written, `!!python/object`.
    static func shorthand(_ tag: Tag) -> String {
        let prefix = "tag:yaml.org,2002:"
        return tag.rawValue.hasPrefix(prefix) ? "!!" + tag.rawValue.dropFirst(prefix.count) : tag.rawValue
    }
}
