import ObjectModel

/// The entities of two versions, paired (see `NameMatching`), with lookups both ways.
struct EntityMatches {
    let source: ModelVersion
    let destination: ModelVersion
    let matching: NameMatching<Entity>
    private let destinationNameOf: [String: String]
    private let sourceNameOf: [String: String]

    init(source: ModelVersion, destination: ModelVersion) {
        self.source = source
        self.destination = destination
        matching = NameMatching(source: source.entities, destination: destination.entities)
        var destinationNameOf: [String: String] = [:]
        var sourceNameOf: [String: String] = [:]
        for pair in matching.pairs {
            guard let sourceEntity = pair.source, let destinationEntity = pair.destination else { continue }
            destinationNameOf[sourceEntity.name] = destinationEntity.name
            sourceNameOf[destinationEntity.name] = sourceEntity.name
        }
        self.destinationNameOf = destinationNameOf
        self.sourceNameOf = sourceNameOf
    }

    /// The destination name of a source entity; nil when it is removed.
    func destinationName(of sourceEntity: String) -> String? {
        destinationNameOf[sourceEntity]
    }

    /// The source entity a destination entity continues; nil when it is new.
    func sourceEntity(of destinationEntity: Entity) -> Entity? {
        sourceNameOf[destinationEntity.name].flatMap(source.entity(named:))
    }
}

/// A property as seen from an entity that declares or inherits it.
struct InheritedProperty<Property: RenamableElement>: RenamableElement {
    var property: Property
    /// The entity that declares it: the entity itself or one of its ancestors.
    var declaringEntity: String
    /// How many parents up the declaring entity is: 0 for the entity itself.
    var level: Int

    var name: String { property.name }
    var renamingIdentifier: String? { property.renamingIdentifier }
}

extension ModelVersion {
    /// Stored attributes of the entity, inherited ones first (transient ones have no storage).
    func storedAttributes(of entity: Entity) -> [InheritedProperty<Attribute>] {
        let ancestry = self.ancestry(of: entity)
        return ancestry.enumerated().flatMap { position, declaring in
            declaring.attributes.filter { !$0.isTransient }.map {
                InheritedProperty(property: $0, declaringEntity: declaring.name, level: ancestry.count - 1 - position)
            }
        }
    }

    /// Stored relationships of the entity, inherited ones first.
    func storedRelationships(of entity: Entity) -> [InheritedProperty<Relationship>] {
        let ancestry = self.ancestry(of: entity)
        return ancestry.enumerated().flatMap { position, declaring in
            declaring.relationships.filter { !$0.isTransient }.map {
                InheritedProperty(property: $0, declaringEntity: declaring.name, level: ancestry.count - 1 - position)
            }
        }
    }
}
