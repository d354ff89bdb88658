import ObjectModel

/// The stored properties of every matched entity pair, paired (see `NameMatching`). Inherited
/// properties take part, so a property moved up or down a hierarchy still matches.
struct PropertyMatches {
    /// By source entity name.
    private(set) var attributes: [String: NameMatching<InheritedProperty<Attribute>>] = [:]
    private(set) var relationships: [String: NameMatching<InheritedProperty<Relationship>>] = [:]

    init(_ matches: EntityMatches) {
        for pair in matches.matching.pairs {
            guard let source = pair.source, let destination = pair.destination else { continue }
            attributes[source.name] = NameMatching(
                source: InheritedProperty<Attribute>.stored(of: source, in: matches.source),
                destination: InheritedProperty<Attribute>.stored(of: destination, in: matches.destination)
            )
            var relationshipMatching = NameMatching(
                source: InheritedProperty<Relationship>.stored(of: source, in: matches.source),
                destination: InheritedProperty<Relationship>.stored(of: destination, in: matches.destination)
            )
            relationshipMatching.unpair { old, _ in RelationshipRules.keepsLinks(old.property, matches: matches) }
            relationships[source.name] = relationshipMatching
        }
    }

    /// The destination name of a source entity's relationship; nil when removed (or the entity is).
    func destinationName(ofRelationship name: String, inSourceEntity entity: String) -> String? {
        relationships[entity]?.pairs.first { $0.source?.name == name }?.destination?.name
    }
}
