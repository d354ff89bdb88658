import Foundation
import JSONRendering

/// Writes a version in the native format (as JSON, which the native loader reads), so a version
/// read from any format can be kept in the database and read back.
public enum NativeModelWriter {
    public static func json(of version: ModelVersion) -> String {
        var root: [(String, JSONValue)] = []
        if !version.versionIdentifiers.isEmpty {
            root.append(("versionIdentifiers", .array(version.versionIdentifiers.map(JSONValue.string))))
        }
        root.append(("entities", .object(version.entities.map { ($0.name, entityJSON($0)) })))
        return JSONValue.object(root).rendered
    }

    static func entityJSON(_ entity: Entity) -> JSONValue {
        var fields: [(String, JSONValue)] = []
        if let parent = entity.parent { fields.append(("parent", .string(parent))) }
        if entity.isAbstract { fields.append(("abstract", .bool(true))) }
        if let className = entity.className { fields.append(("className", .string(className))) }
        if let id = entity.renamingIdentifier { fields.append(("renamingIdentifier", .string(id))) }
        if let modifier = entity.versionHashModifier { fields.append(("versionHashModifier", .string(modifier))) }
        if !entity.userInfo.isEmpty { fields.append(("userInfo", userInfoJSON(entity.userInfo))) }
        fields.append(("attributes", .object(entity.attributes.map { ($0.name, attributeJSON($0)) })))
        fields.append(("relationships", .object(entity.relationships.map { ($0.name, relationshipJSON($0)) })))
        if !entity.uniquenessConstraints.isEmpty {
            fields.append(("uniquenessConstraints", .array(entity.uniquenessConstraints.map { .array($0.map(JSONValue.string)) })))
        }
        if !entity.indexes.isEmpty {
            fields.append(("indexes", .object(entity.indexes.map { ($0.name, .array($0.properties.map(JSONValue.string))) })))
        }
        return .object(fields)
    }

    static func attributeJSON(_ attribute: Attribute) -> JSONValue {
        var fields: [(String, JSONValue)] = [("type", .string(attribute.type.nativeName))]
        fields.append(("optional", .bool(attribute.isOptional)))
        if attribute.isTransient { fields.append(("transient", .bool(true))) }
        if attribute.isReadOnly { fields.append(("readOnly", .bool(true))) }
        if let value = attribute.defaultValue { fields.append(("default", .string(value))) }
        if let id = attribute.renamingIdentifier { fields.append(("renamingIdentifier", .string(id))) }
        if let modifier = attribute.versionHashModifier { fields.append(("versionHashModifier", .string(modifier))) }
        if !attribute.userInfo.isEmpty { fields.append(("userInfo", userInfoJSON(attribute.userInfo))) }
        return .object(fields)
    }

    static func relationshipJSON(_ relationship: Relationship) -> JSONValue {
        var fields: [(String, JSONValue)] = [("destination", .string(relationship.destination))]
        if let inverse = relationship.inverse { fields.append(("inverse", .string(inverse))) }
        fields.append(("toMany", .bool(relationship.isToMany)))
        if relationship.isOrdered { fields.append(("ordered", .bool(true))) }
        fields.append(("minCount", .number(relationship.minCount)))
        fields.append(("maxCount", .number(relationship.maxCount)))
        fields.append(("deleteRule", .string(relationship.deleteRule.rawValue)))
        fields.append(("optional", .bool(relationship.isOptional)))
        if relationship.isTransient { fields.append(("transient", .bool(true))) }
        if relationship.isReadOnly { fields.append(("readOnly", .bool(true))) }
        if let id = relationship.renamingIdentifier { fields.append(("renamingIdentifier", .string(id))) }
        if let modifier = relationship.versionHashModifier { fields.append(("versionHashModifier", .string(modifier))) }
        if !relationship.userInfo.isEmpty { fields.append(("userInfo", userInfoJSON(relationship.userInfo))) }
        return .object(fields)
    }

    static func userInfoJSON(_ userInfo: [String: String]) -> JSONValue {
        .object(userInfo.keys.sorted().map { ($0, .string(userInfo[$0]!)) })
    }
}
