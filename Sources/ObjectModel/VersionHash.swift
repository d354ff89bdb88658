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

    /// 1. Each property is hashed once, for the entity declaring it.
    /// 2. An entity's properties, sorted by name, are its parent's (sorted already) merged with
    ///    its own: nothing is sorted or walked up again per entity, so a deep chain costs what
    ///    its hashes' input does. Where two properties share a name in one hierarchy, an entity
    ///    name is repeated or inheritance loops (all refused by validation), an entity is hashed
    ///    as `hash(of:in:)` does, whose stable sort decides how such names are ordered.
    private static func computeHashes(of version: ModelVersion) -> EntityHashes {
        let namesAreUnique = Set(version.entities.map(\.name)).count == version.entities.count
        var sorted: [String: [(String, Digest)]] = [:]
        var entities: [String: Digest] = [:]
        for entity in version.entities {
            let properties = namesAreUnique ? mergedProperties(of: entity, in: version, sorted: &sorted) : nil
            entities[entity.name] = properties.map { hash(of: entity, sortedProperties: $0) } ?? hash(of: entity, in: version)
        }
        return EntityHashes(entities: entities, model: modelHash(entityHashes: entities))
    }

    /// The entity's properties sorted by name, from its ancestors' in `sorted`, which gets
    /// theirs and its own; nil where a name repeats or its inheritance loops.
    private static func mergedProperties(of entity: Entity, in version: ModelVersion, sorted: inout [String: [(String, Digest)]]) -> [(String, Digest)]? {
        // The entities above it not merged yet, nearest first, up to one that is or a root.
        var chain = [entity]
        var seen: Set<String> = [entity.name]
        while sorted[chain[chain.count - 1].name] == nil, let name = chain[chain.count - 1].parent, let parent = version.entity(named: name), sorted[name] == nil {
            guard seen.insert(name).inserted else { return nil }
            chain.append(parent)
        }
        for member in chain.reversed() where sorted[member.name] == nil {
            let own = (member.attributes.map { ($0.name, hash(of: $0)) } + member.relationships.map { ($0.name, hash(of: $0)) }).sorted { $0.0 < $1.0 }
            let inherited = member.parent.flatMap { version.entity(named: $0) != nil ? sorted[$0] : [] } ?? []
            guard let merged = merge(inherited, own) else { return nil }
            sorted[member.name] = merged
        }
        return sorted[entity.name]
    }

    /// Two lists sorted by name as one; nil when a name is in both or twice in one.
    private static func merge(_ first: [(String, Digest)], _ second: [(String, Digest)]) -> [(String, Digest)]? {
        var merged: [(String, Digest)] = []
        merged.reserveCapacity(first.count + second.count)
        var (i, j) = (0, 0)
        while i < first.count || j < second.count {
            let next: (String, Digest)
            if j == second.count || (i < first.count && first[i].0 < second[j].0) {
                next = first[i]
                i += 1
            } else {
                next = second[j]
                j += 1
            }
            if let last = merged.last, last.0 == next.0 { return nil }
            merged.append(next)
        }
        return merged
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
        let properties = attributes + version.allRelationships(of: entity).map { ($0.name, hash(of: $0)) }
        return hash(of: entity, sortedProperties: properties.sorted(by: { $0.0 < $1.0 }))
    }

    /// The entity's hash over every property it has, inherited ones included, as (name, hash)
    /// sorted by name.
    private static func hash(of entity: Entity, sortedProperties: [(String, Digest)]) -> Digest {
        var encoder = CanonicalEncoder()
        encoder.field("kind", "entity")
        encoder.field("name", entity.name)
        encoder.field("parent", entity.parent ?? "")
        encoder.field("abstract", entity.isAbstract)
        encoder.field("versionHashModifier", entity.versionHashModifier ?? "")
        for (name, digest) in sortedProperties {
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
        bytes.append(contentsOf: key.utf8)
        bytes.append(UInt8(ascii: "="))
        bytes.append(contentsOf: String(value.utf8.count).utf8)
        bytes.append(UInt8(ascii: ":"))
        bytes.append(contentsOf: value.utf8)
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
