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

extension InheritedProperty {
    /// The stored properties of `entity` in `version` that `declared` picks from each entity of
    /// its ancestry, inherited ones first (transient ones have no storage).
    static func stored(of entity: Entity, in version: ModelVersion, _ declared: (Entity) -> [Property]) -> [InheritedProperty] {
        let ancestry = version.ancestry(of: entity)
        return ancestry.enumerated().flatMap { position, declaring in
            declared(declaring).map { InheritedProperty(property: $0, declaringEntity: declaring.name, level: ancestry.count - 1 - position) }
        }
    }
}

extension InheritedProperty<Attribute> {
    static func stored(of entity: Entity, in version: ModelVersion) -> [Self] {
        stored(of: entity, in: version) { $0.attributes.filter { !$0.isTransient } }
    }
}

extension InheritedProperty<Relationship> {
    static func stored(of entity: Entity, in version: ModelVersion) -> [Self] {
        stored(of: entity, in: version) { $0.relationships.filter { !$0.isTransient } }
    }
}
