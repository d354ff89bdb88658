import Foundation
import Yams

/// Reads the native format: a folder holding `model.yaml` (name, version order, current version)
/// and one YAML or JSON file per version, named after the version. See docs/model-format.md.
public enum NativeModelLoader {
    public static let manifestNames = ["model.yaml", "model.yml", "model.json"]
    static let versionExtensions = ["yaml", "yml", "json"]

    public static func isNativeModelFolder(_ path: String) -> Bool {
        manifestNames.contains { FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent($0)) }
    }

    /// Every version whose file cannot be read is set aside in `unusableVersions`; only a
    /// missing or malformed manifest throws.
    public static func load(folder: String) throws -> VersionedModel {
        guard let manifestName = manifestNames.first(where: {
            FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent($0))
        }) else {
            throw ModelLoadError([ModelIssue(file: folder, message: "not a versioned model folder: no model.yaml in it")])
        }
        let manifestPath = (folder as NSString).appendingPathComponent(manifestName)
        let manifest = try readManifest(at: manifestPath)
        var versions: [ModelVersion] = []
        var unusable: [UnusableVersion] = []
        for name in manifest.versions {
            guard let file = versionFile(named: name, in: folder) else {
                unusable.append(UnusableVersion(name: name, issues: [
                    ModelIssue(file: manifestPath, message: "version '\(name)' has no file \(name).yaml in \(folder)"),
                ]))
                continue
            }
            do {
                let text = try ModelYAMLReader.readText(file)
                versions.append(try parseVersion(text, name: name, file: file))
            } catch let issue as ModelIssue {
                unusable.append(UnusableVersion(name: name, issues: [issue]))
            }
        }
        return VersionedModel(
            name: manifest.name, versions: versions, currentVersionName: manifest.current,
            path: folder, format: .native, unusableVersions: unusable, versionNames: manifest.versions
        )
    }

    struct Manifest {
        var name: String
        var versions: [String]
        var current: String
    }

    static func readManifest(at path: String) throws -> Manifest {
        do {
            let reader = ModelYAMLReader(file: path)
            let root = try ModelYAMLReader.compose(try ModelYAMLReader.readText(path), file: path)
            var name: String?
            var versions: [String] = []
            var current: String?
            for pair in try reader.mapping(root, what: "the manifest", allowed: ["name", "versions", "current"]) {
                switch pair.key {
                case "name": name = try reader.string(pair.value, what: "name")
                case "versions": versions = try reader.strings(pair.value, what: "versions")
                default: current = try reader.string(pair.value, what: "current")
                }
            }
            guard let name, !name.isEmpty else { throw reader.issue("the manifest needs a 'name'", at: root) }
            guard !versions.isEmpty else { throw reader.issue("the manifest needs 'versions', oldest first", at: root) }
            if let duplicate = versions.first(where: { v in versions.filter { $0 == v }.count > 1 }) {
                throw reader.issue("version '\(duplicate)' is listed twice", at: root)
            }
            let currentName = current ?? versions.last!
            guard versions.contains(currentName) else {
                throw reader.issue("current version '\(currentName)' is not among the versions", at: root)
            }
            return Manifest(name: name, versions: versions, current: currentName)
        } catch let issue as ModelIssue {
            throw ModelLoadError([issue])
        }
    }

    static func versionFile(named name: String, in folder: String) -> String? {
        versionExtensions
            .map { (folder as NSString).appendingPathComponent("\(name).\($0)") }
            .first { FileManager.default.fileExists(atPath: $0) }
    }

    /// Parses one version file's text. `file` names it in messages.
    public static func parseVersion(_ text: String, name: String, file: String) throws -> ModelVersion {
        let reader = ModelYAMLReader(file: file)
        let root = try ModelYAMLReader.compose(text, file: file)
        var version = ModelVersion(name: name, entities: [], sourceFile: file)
        for pair in try reader.mapping(root, what: "the version", allowed: ["entities", "versionIdentifiers"]) {
            switch pair.key {
            case "versionIdentifiers":
                version.versionIdentifiers = try reader.strings(pair.value, what: "versionIdentifiers")
            default:
                version.entities = try reader.mapping(pair.value, what: "entities").map { entityPair in
                    try parseEntity(entityPair.value, name: entityPair.key, reader: reader.at(entity: entityPair.key))
                }
            }
        }
        return version
    }

    static let entityKeys: Set<String> = [
        "parent", "abstract", "className", "renamingIdentifier", "versionHashModifier", "userInfo",
        "attributes", "relationships", "uniquenessConstraints", "indexes",
    ]

    static func parseEntity(_ node: Node, name: String, reader: ModelYAMLReader) throws -> Entity {
        var entity = Entity(name: name)
        if node.scalar?.string == "" || node.scalar?.string == "~" { return entity }
        for pair in try reader.mapping(node, what: "the entity", allowed: entityKeys) {
            let value = pair.value
            switch pair.key {
            case "parent": entity.parent = try reader.optionalString(value, what: "parent")
            case "abstract": entity.isAbstract = try reader.bool(value, what: "abstract")
            case "className": entity.className = try reader.optionalString(value, what: "className")
            case "attributes":
                for attributePair in try reader.mapping(value, what: "attributes") {
                    let attributeReader = reader.at(property: attributePair.key)
                    entity.attributes.append(try parseAttribute(attributePair.value, name: attributePair.key, reader: attributeReader))
                }
            case "relationships":
                for relationshipPair in try reader.mapping(value, what: "relationships") {
                    let relationshipReader = reader.at(property: relationshipPair.key)
                    entity.relationships.append(try parseRelationship(relationshipPair.value, name: relationshipPair.key, reader: relationshipReader))
                }
            case "uniquenessConstraints":
                guard let sequence = value.sequence else {
                    throw reader.issue("uniquenessConstraints must be a list of property lists", at: value)
                }
                entity.uniquenessConstraints = try sequence.map { try reader.strings($0, what: "a uniqueness constraint") }
            case "indexes":
                for indexPair in try reader.mapping(value, what: "indexes") {
                    entity.indexes.append(FetchIndex(name: indexPair.key, properties: try reader.strings(indexPair.value, what: "index \(indexPair.key)")))
                }
            default: try parseElementKey(pair.key, value, into: &entity, reader: reader)
            }
        }
        return entity
    }

    static let attributeKeys: Set<String> = [
        "type", "optional", "transient", "readOnly", "default", "renamingIdentifier", "versionHashModifier", "userInfo",
    ]

    static func parseAttribute(_ node: Node, name: String, reader: ModelYAMLReader) throws -> Attribute {
        // Shorthand: `name: string`.
        if let scalar = node.scalar {
            guard let type = AttributeType(spelling: scalar.string) else {
                throw reader.issue("unknown attribute type '\(scalar.string)'", at: node)
            }
            return Attribute(name: name, type: type)
        }
        var attribute = Attribute(name: name, type: .undefined)
        var hasType = false
        for pair in try reader.mapping(node, what: "the attribute", allowed: attributeKeys) {
            let value = pair.value
            switch pair.key {
            case "type":
                let spelling = try reader.string(value, what: "type")
                guard let type = AttributeType(spelling: spelling) else {
                    throw reader.issue("unknown attribute type '\(spelling)' (expected one of: \(AttributeType.allCases.map(\.nativeName).joined(separator: ", ")))", at: value)
                }
                attribute.type = type
                hasType = true
            case "default": attribute.defaultValue = try reader.optionalString(value, what: "default")
            default: try parsePropertyKey(pair.key, value, into: &attribute, reader: reader)
            }
        }
        if !hasType && !attribute.isTransient {
            throw reader.issue("the attribute needs a 'type'", at: node)
        }
        return attribute
    }

    static let relationshipKeys: Set<String> = [
        "destination", "inverse", "toMany", "ordered", "minCount", "maxCount", "deleteRule", "optional",
        "transient", "readOnly", "renamingIdentifier", "versionHashModifier", "userInfo",
    ]

    static func parseRelationship(_ node: Node, name: String, reader: ModelYAMLReader) throws -> Relationship {
        var destination: String?
        var relationship = Relationship(name: name, destination: "")
        var maxCount: Int?
        for pair in try reader.mapping(node, what: "the relationship", allowed: relationshipKeys) {
            let value = pair.value
            switch pair.key {
            case "destination": destination = try reader.string(value, what: "destination")
            case "inverse": relationship.inverse = try reader.optionalString(value, what: "inverse")
            case "toMany": relationship.isToMany = try reader.bool(value, what: "toMany")
            case "ordered": relationship.isOrdered = try reader.bool(value, what: "ordered")
            case "minCount": relationship.minCount = try reader.int(value, what: "minCount")
            case "maxCount": maxCount = try reader.int(value, what: "maxCount")
            case "deleteRule":
                let spelling = try reader.string(value, what: "deleteRule")
                guard let rule = DeleteRule(spelling: spelling) else {
                    throw reader.issue("unknown delete rule '\(spelling)' (expected nullify, cascade, deny or noAction)", at: value)
                }
                relationship.deleteRule = rule
            default: try parsePropertyKey(pair.key, value, into: &relationship, reader: reader)
            }
        }
        guard let destination, !destination.isEmpty else {
            throw reader.issue("the relationship needs a 'destination'", at: node)
        }
        relationship.destination = destination
        relationship.maxCount = maxCount ?? (relationship.isToMany ? 0 : 1)
        return relationship
    }

    /// The keys attributes and relationships both take (`attributeKeys`, `relationshipKeys`).
    static func parsePropertyKey(_ key: String, _ value: Node, into property: inout some PropertyDescription, reader: ModelYAMLReader) throws {
        switch key {
        case "optional": property.isOptional = try reader.bool(value, what: key)
        case "transient": property.isTransient = try reader.bool(value, what: key)
        case "readOnly": property.isReadOnly = try reader.bool(value, what: key)
        default: try parseElementKey(key, value, into: &property, reader: reader)
        }
    }

    /// The keys entities and properties all take: `renamingIdentifier`, `versionHashModifier`,
    /// `userInfo` (the allowed keys were checked before).
    static func parseElementKey(_ key: String, _ value: Node, into element: inout some ModelElement, reader: ModelYAMLReader) throws {
        switch key {
        case "renamingIdentifier": element.renamingIdentifier = try reader.optionalString(value, what: key)
        case "versionHashModifier": element.versionHashModifier = try reader.optionalString(value, what: key)
        default: element.userInfo = try reader.stringMap(value, what: key)
        }
    }
}
