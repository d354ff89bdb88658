import Yams
import ObjectModel

/// A mapping model file's places: entity mapping and property. Native mapping models are read
/// by ObjectModel's `YAMLReader`, as model versions are.
struct MappingLocation: YAMLLocation {
    var entityMapping: String?
    var property: String?

    init() {}

    init(entityMapping: String?, property: String?) {
        self.entityMapping = entityMapping
        self.property = property
    }

    func issue(file: String, line: Int?, column: Int?, message: String) -> MappingIssue {
        MappingIssue(file: file, line: line, column: column, entityMapping: entityMapping, property: property, message: message)
    }
}

typealias MappingYAMLReader = YAMLReader<MappingLocation>

extension YAMLReader where Location == MappingLocation {
    func at(entityMapping: String? = nil, property: String? = nil) -> YAMLReader {
        at(MappingLocation(entityMapping: entityMapping ?? location.entityMapping, property: property ?? location.property))
    }

    /// A value expression: nil for YAML null (the Xcode default), else non-empty text.
    func expression(_ node: Node, what: String) throws -> String? {
        try optional(node, what: what, nonEmptyString)
    }
}
