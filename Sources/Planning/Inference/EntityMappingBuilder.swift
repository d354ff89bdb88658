import ObjectModel

/// Builds the mapping of one entity pair, with the refusals its changes raise.
struct EntityMappingBuilder {
    let matches: EntityMatches
    let properties: PropertyMatches

    func mapping(source: Entity?, destination: Entity?) -> (mapping: EntityMapping, refusals: [InferenceRefusal]) {
        switch (source, destination) {
        case (let source?, let destination?):
            return matched(source, destination)
        case (nil, let destination?):
            // A new entity has no rows: nothing to refuse.
            let mapping = EntityMapping(
                kind: .add, sourceEntity: nil, destinationEntity: destination.name,
                attributeMappings: InheritedProperty<Attribute>.stored(of: destination, in: matches.destination).map { .init(kind: .add, source: nil, destination: $0.name) },
                relationshipMappings: InheritedProperty<Relationship>.stored(of: destination, in: matches.destination).map { .init(kind: .add, source: nil, destination: $0.name) }
            )
            return (mapping, [])
        case (let source?, nil):
            let mapping = EntityMapping(
                kind: .remove, sourceEntity: source.name, destinationEntity: nil, sourceIsAbstract: source.isAbstract,
                attributeMappings: InheritedProperty<Attribute>.stored(of: source, in: matches.source).map { .init(kind: .remove, source: $0.name, destination: nil) },
                relationshipMappings: InheritedProperty<Relationship>.stored(of: source, in: matches.source).map { .init(kind: .remove, source: $0.name, destination: nil) }
            )
            return (mapping, [])
        case (nil, nil):
            preconditionFailure("a matched pair has a source or a destination")
        }
    }

    private func matched(_ source: Entity, _ destination: Entity) -> (EntityMapping, [InferenceRefusal]) {
        var refusals: [InferenceRefusal] = []
        if !source.isAbstract && destination.isAbstract {
            refusals.append(.madeAbstract(entity: destination.name))
        }

        let attributeMatching = properties.attributes[source.name]!
        refusals += contestRefusals(attributeMatching)
        var attributeMappings: [PropertyMapping] = []
        for pair in attributeMatching.pairs {
            var mapping = Self.skeleton(pair.source?.name, pair.destination?.name)
            if let old = pair.source, let new = pair.destination {
                let (changes, problems) = AttributeRules.compare(old.property, new.property, entity: new.declaringEntity)
                mapping.changes = move(old, new, in: destination) + changes
                mapping.needsDataCheck = changes.contains(where: \.needsDataCheck)
                refusals += problems
            } else if let new = pair.destination, let problem = AttributeRules.addedRefusal(new.property, entity: new.declaringEntity) {
                refusals.append(problem)
            }
            attributeMappings.append(mapping)
        }

        let relationshipMatching = properties.relationships[source.name]!
        refusals += contestRefusals(relationshipMatching)
        var relationshipMappings: [PropertyMapping] = []
        for pair in relationshipMatching.pairs {
            var mapping = Self.skeleton(pair.source?.name, pair.destination?.name)
            if let old = pair.source, let new = pair.destination {
                let (changes, problems) = RelationshipRules.compare(
                    old.property, new.property, entity: new.declaringEntity, matches: matches,
                    inverseName: { properties.destinationName(ofRelationship: $1, inSourceEntity: $0) }
                )
                mapping.changes = move(old, new, in: destination) + changes
                mapping.needsDataCheck = RelationshipRules.needsDataCheck(old.property, new.property)
                refusals += problems
            } else if let new = pair.destination {
                mapping.needsDataCheck = RelationshipRules.needsDataCheck(nil, new.property)
            }
            relationshipMappings.append(mapping)
        }

        let mapping = EntityMapping(
            kind: source.name == destination.name ? .copy : .rename,
            sourceEntity: source.name, destinationEntity: destination.name, sourceIsAbstract: source.isAbstract,
            attributeMappings: attributeMappings, relationshipMappings: relationshipMappings,
            hierarchyChange: HierarchyRules.change(from: source, to: destination, matches: matches)
        )
        return (mapping, refusals)
    }

    private static func skeleton(_ source: String?, _ destination: String?) -> PropertyMapping {
        let kind: PropertyMapping.Kind = switch (source, destination) {
        case (nil, _): .add
        case (_, nil): .remove
        case let (old?, new?): old == new ? .copy : .rename
        }
        return PropertyMapping(kind: kind, source: source, destination: destination)
    }

    private func move<Property>(_ old: InheritedProperty<Property>, _ new: InheritedProperty<Property>, in destination: Entity) -> [PropertyChange] {
        HierarchyRules.move(from: old, to: new, destinationEntity: destination, matches: matches).map { [$0] } ?? []
    }

    private func contestRefusals<Property>(_ matching: NameMatching<InheritedProperty<Property>>) -> [InferenceRefusal] {
        matching.contests.map {
            .contestedRenamingIdentifier(
                entity: $0.destination.declaringEntity, property: $0.destination.name,
                identifier: $0.identifier, claimedBy: $0.winner.name
            )
        }
    }
}
