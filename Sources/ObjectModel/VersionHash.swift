import Crypto

/// Version hashes: SHA-256 over a canonical encoding of exactly the fields that affect
/// persistence. The encoding is pinned by golden tests and documented in docs/model-format.md;
/// a hash never changes between releases.
///
/// Encoding: a sequence of fields, each `key=<byte length of value>:<value>;` in UTF-8.
/// Booleans are `1`/`0`, numbers decimal, absent strings empty.
public enum VersionHash {
    /// 32 bytes as 64 lowercase hex digits.
    public typealias Digest = String

    public struct EntityHashes: Sendable, Hashable {
        /// Entity name -> hash.
        public var entities: [String: Digest]
        public var model: Digest
    }

    /// SHA-256 of any text, as 64 lowercase hex digits: fingerprints of work that is not a
    /// model (a heavyweight step's statements, for its checkpoints).
    public static func digest(of text: String) -> Digest {
        var encoder = CanonicalEncoder()
        encoder.field("text", text)
        return encoder.digest()
    }

    /// Computed once per version (`ModelVersion.cached`).
    public static func hashes(of version: ModelVersion) -> EntityHashes {
        version.cached(EntityHashes.self, computeHashes)
    }

    /// Each property is hashed once, for its own entity, and each entity's hash reads its
    /// ancestors' from there: in a deep hierarchy an inherited property is not hashed again
    /// for every entity below it. The same digests as `hash(of:in:)`.
    private static func computeHashes(of version: ModelVersion) -> EntityHashes {
        // By name, as `ancestry` finds parents: the first entity of a name.
        var own: [String: (attributes: [(String, Digest)], relationships: [(String, Digest)])] = [:]
        func properties(of entity: Entity) -> (attributes: [(String, Digest)], relationships: [(String, Digest)]) {
            (entity.attributes.map { ($0.name, hash(of: $0)) }, entity.relationships.map { ($0.name, hash(of: $0)) })
        }
        for entity in version.entities where own[entity.name] == nil {
            own[entity.name] = properties(of: entity)
        }
        var entities: [String: Digest] = [:]
        for entity in version.entities {
            let ancestors = version.ancestry(of: entity).dropLast().map { own[$0.name]! } + [properties(of: entity)]
            entities[entity.name] = hash(of: entity, properties: ancestors.flatMap(\.attributes) + ancestors.flatMap(\.relationships))
        }
        return EntityHashes(entities: entities, model: modelHash(entityHashes: entities))
    }

    /// Over the entity hashes, by entity name.
    public static func modelHash(entityHashes: [String: Digest]) -> Digest {
        var encoder = CanonicalEncoder()
        encoder.field("kind", "model")
        for name in entityHashes.keys.sorted() {
            encoder.field("entity:" + name, entityHashes[name]!)
        }
        return encoder.digest()
    }

    /// Name, parent, abstract, versionHashModifier, and the hash of every property the entity
    /// has, inherited ones included (they are stored in its rows too), by property name.
    public static func hash(of entity: Entity, in version: ModelVersion) -> Digest {
        let attributes = version.allAttributes(of: entity).map { ($0.name, hash(of: $0)) }
        return hash(of: entity, properties: attributes + version.allRelationships(of: entity).map { ($0.name, hash(of: $0)) })
    }

    /// The entity's hash over `properties`: every property it has, inherited ones included, as
    /// (name, hash), attributes before relationships, the root's first.
    private static func hash(of entity: Entity, properties: [(String, Digest)]) -> Digest {
        var encoder = CanonicalEncoder()
        encoder.field("kind", "entity")
        encoder.field("name", entity.name)
        encoder.field("parent", entity.parent ?? "")
        encoder.field("abstract", entity.isAbstract)
        encoder.field("versionHashModifier", entity.versionHashModifier ?? "")
        for (name, digest) in properties.sorted(by: { $0.0 < $1.0 }) {
            encoder.field("property:" + name, digest)
        }
        return encoder.digest()
    }

    public static func hash(of attribute: Attribute) -> Digest {
        var encoder = propertyEncoder(kind: "attribute", attribute)
        encoder.field("type", attribute.type.rawValue)
        encoder.field("versionHashModifier", attribute.versionHashModifier ?? "")
        return encoder.digest()
    }

    public static func hash(of relationship: Relationship) -> Digest {
        var encoder = propertyEncoder(kind: "relationship", relationship)
        encoder.field("destination", relationship.destination)
        encoder.field("toMany", relationship.isToMany)
        encoder.field("minCount", String(relationship.minCount))
        encoder.field("maxCount", String(relationship.maxCount))
        encoder.field("deleteRule", relationship.deleteRule.rawValue)
        encoder.field("ordered", relationship.isOrdered)
        encoder.field("inverse", relationship.inverse ?? "")
        encoder.field("versionHashModifier", relationship.versionHashModifier ?? "")
        return encoder.digest()
    }

    /// The fields every property's hash starts with: its kind, name and flags.
    private static func propertyEncoder(kind: String, _ property: some PropertyDescription) -> CanonicalEncoder {
        var encoder = CanonicalEncoder()
        encoder.field("kind", kind)
        encoder.field("name", property.name)
        encoder.field("optional", property.isOptional)
        encoder.field("transient", property.isTransient)
        encoder.field("readOnly", property.isReadOnly)
        return encoder
    }
}

private struct CanonicalEncoder {
    private var bytes: [UInt8] = []

    mutating func field(_ key: String, _ value: String) {
        bytes += Array(key.utf8)
        bytes += Array("=\(value.utf8.count):".utf8)
        bytes += Array(value.utf8)
        bytes.append(UInt8(ascii: ";"))
    }

    mutating func field(_ key: String, _ value: Bool) {
        field(key, value ? "1" : "0")
    }

    func digest() -> String {
        SHA256.hash(data: bytes).map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined()
    }
}
