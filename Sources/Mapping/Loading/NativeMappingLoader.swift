import Yams

/// Reads the native mapping format, YAML or JSON (docs/mapping-format.md):
///
///     source: Recipes 2
///     destination: Recipes 3
///     entityMappings:
///       - name: RecipeToRecipe
///         type: transform          # add | remove | copy | transform | custom
///         source: Recipe
///         destination: Recipe
///         filter: "amount > 100"   # optional
///         policy: SomePolicy       # optional
///         attributes: {temperatureC: "($source.temperature - 32.0) / 1.8"}
///         relationships: {author: '...'}
///
/// Unknown keys are errors. Expressions stay text; a null expression means the Xcode default.
enum NativeMappingLoader {
    static let modelKeys: Set<String> = ["source", "destination", "entityMappings"]
    static let entityMappingKeys: Set<String> = [
        "name", "type", "source", "destination", "filter", "policy", "attributes", "relationships",
    ]

    /// Parses one mapping file's text; `file` names it in messages. Throws a `MappingIssue`.
    static func parse(_ text: String, file: String) throws -> MappingModel {
        let reader = MappingYAMLReader(file: file)
        let root = try MappingYAMLReader.compose(text, file: file)
        var source: String?
        var destination: String?
        var entityMappings: [EntityMappingDefinition]?
        for pair in try reader.mapping(root, what: "the mapping model", allowed: modelKeys) {
            switch pair.key {
            case "source": source = try reader.nonEmptyString(pair.value, what: "'source'")
            case "destination": destination = try reader.nonEmptyString(pair.value, what: "'destination'")
            default: entityMappings = try parseEntityMappings(pair.value, reader: reader)
            }
        }
        guard let source else { throw reader.issue("the mapping model needs a 'source' version name", at: root) }
        guard let destination else { throw reader.issue("the mapping model needs a 'destination' version name", at: root) }
        guard let entityMappings else { throw reader.issue("the mapping model needs 'entityMappings', a list of entity mappings", at: root) }
        if source == destination {
            throw reader.issue("source and destination are the same version '\(source)'", at: root)
        }
        return MappingModel(source: source, destination: destination, entityMappings: entityMappings, file: file, generatesUnmentionedEntityMappings: true)
    }

    static func parseEntityMappings(_ node: Node, reader: MappingYAMLReader) throws -> [EntityMappingDefinition] {
        guard let sequence = node.sequence else {
            throw reader.issue("entityMappings must be a list of entity mappings", at: node)
        }
        var result: [EntityMappingDefinition] = []
        var lineOfName: [String: Int] = [:]
        for (index, item) in sequence.enumerated() {
            let mapping = try parseEntityMapping(item, number: index + 1, reader: reader)
            let line = item.mark?.line ?? 0
            if let first = lineOfName[mapping.name] {
                throw reader.at(entityMapping: mapping.name).issue("the name is already used by the entity mapping at line \(first)", at: item)
            }
            lineOfName[mapping.name] = line
            result.append(mapping)
        }
        return result
    }

    static func parseEntityMapping(_ node: Node, number: Int, reader: MappingYAMLReader) throws -> EntityMappingDefinition {
        // 1. The name first, so that every later message names the entity mapping.
        let unnamed = reader.at(entityMapping: "#\(number)")
        guard let fields = node.mapping else {
            throw unnamed.issue("an entity mapping must be a mapping", at: node)
        }
        guard let nameNode = fields.first(where: { $0.key.scalar?.string == "name" })?.value else {
            throw unnamed.issue("needs a 'name'", at: node)
        }
        let name = try unnamed.nonEmptyString(nameNode, what: "'name'")
        let reader = reader.at(entityMapping: name)

        // 2. Every key, in file order.
        var type: EntityMappingType?
        var mapping = EntityMappingDefinition(name: name, type: .copy, sourceEntity: nil, destinationEntity: nil)
        var keyNodes: [String: Node] = [:]
        for pair in try reader.mapping(node, what: "the entity mapping", allowed: entityMappingKeys) {
            keyNodes[pair.key] = pair.keyNode
            let value = pair.value
            switch pair.key {
            case "name": break
            case "type":
                let spelling = try reader.nonEmptyString(value, what: "'type'")
                guard let parsed = EntityMappingType(rawValue: spelling) else {
                    throw reader.issue("unknown type '\(spelling)' (expected \(typeList))", at: value)
                }
                type = parsed
            case "source": mapping.sourceEntity = try reader.nonEmptyString(value, what: "'source'")
            case "destination": mapping.destinationEntity = try reader.nonEmptyString(value, what: "'destination'")
            case "filter": mapping.filter = try reader.nonEmptyString(value, what: "'filter'")
            case "policy": mapping.policy = try reader.nonEmptyString(value, what: "'policy'")
            case "attributes": mapping.attributeMappings = try parsePropertyMappings(value, what: "attributes", reader: reader)
            default: mapping.relationshipMappings = try parsePropertyMappings(value, what: "relationships", reader: reader)
            }
        }
        guard let type else {
            throw reader.issue("needs a 'type' (\(typeList))", at: node)
        }
        mapping.type = type

        // 3. The type agrees with the entities named.
        try checkEntities(of: mapping, keyNodes: keyNodes, node: node, reader: reader)
        return mapping
    }

    static let typeList = "add, remove, copy, transform or custom"

    static func checkEntities(of mapping: EntityMappingDefinition, keyNodes: [String: Node], node: Node, reader: MappingYAMLReader) throws {
        let type = mapping.type.rawValue
        switch mapping.type {
        case .add:
            if keyNodes["source"] != nil {
                throw reader.issue("an add mapping creates destination instances from nothing, so it takes no 'source'", at: keyNodes["source"])
            }
            if keyNodes["filter"] != nil {
                throw reader.issue("an add mapping has no source instances to filter, so it takes no 'filter'", at: keyNodes["filter"])
            }
            if mapping.destinationEntity == nil {
                throw reader.issue("an add mapping needs a 'destination' entity", at: node)
            }
        case .remove:
            for key in ["destination", "attributes", "relationships"] where keyNodes[key] != nil {
                throw reader.issue("a remove mapping drops the source instances, so it takes no '\(key)'", at: keyNodes[key])
            }
            if mapping.sourceEntity == nil {
                throw reader.issue("a remove mapping needs a 'source' entity", at: node)
            }
        case .copy, .transform, .custom:
            if mapping.sourceEntity == nil {
                throw reader.issue("a \(type) mapping needs a 'source' entity", at: node)
            }
            if mapping.destinationEntity == nil {
                throw reader.issue("a \(type) mapping needs a 'destination' entity", at: node)
            }
        }
    }

    static func parsePropertyMappings(_ node: Node, what: String, reader: MappingYAMLReader) throws -> [PropertyMappingDefinition] {
        guard node.mapping != nil else {
            throw reader.issue("'\(what)' must map each destination property to its value expression", at: node)
        }
        return try reader.mapping(node, what: "'\(what)'").map { pair in
            let propertyReader = reader.at(property: pair.key)
            return PropertyMappingDefinition(name: pair.key, valueExpression: try propertyReader.expression(pair.value, what: "the value expression"))
        }
    }
}
