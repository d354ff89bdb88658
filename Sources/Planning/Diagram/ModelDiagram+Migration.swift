import ObjectModel

extension ModelDiagram {
    /// The destination version, plus what the source had and the destination dropped, each
    /// element marked with what a migration from `source` does to it. Elements are matched as
    /// the inference engine matches them (renaming identifiers, then names), so a rename shows
    /// as one element "renamed from …", never as a removal and an addition; a property moved up
    /// or down a hierarchy shows where it now is, "moved from …".
    public static func migration(from source: ModelVersion, to destination: ModelVersion) -> ModelDiagram {
        let matches = MigrationMatches(source: source, destination: destination)
        var entities: [DiagramEntity] = []
        var ends: [RelationshipEnd] = []
        var inheritance: [DiagramInheritance] = []
        for pair in matches.entities.matching.pairs {
            switch (pair.source, pair.destination) {
            case (let old?, let new?):
                entities.append(matches.keptEntity(old, as: new))
                ends += new.relationships.filter { !$0.isTransient }.map { relationship in
                    RelationshipEnd(entity: new.name, relationship, mark: matches.relationshipMark(relationship, declaredBy: new.name))
                }
                ends += matches.removedRelationships(of: old)
            case (nil, let new?):
                // A new entity's properties may continue others, moved up from a sub-entity.
                entities.append(DiagramEntity(
                    name: new.name, isAbstract: new.isAbstract,
                    attributes: new.attributes.filter { !$0.isTransient }.map { DiagramAttribute($0, mark: matches.attributeMark($0, declaredBy: new.name)) },
                    mark: .added
                ))
                ends += new.relationships.filter { !$0.isTransient }.map { relationship in
                    RelationshipEnd(entity: new.name, relationship, mark: matches.relationshipMark(relationship, declaredBy: new.name))
                }
            case (let old?, nil):
                entities.append(DiagramEntity(
                    name: old.name, isAbstract: old.isAbstract,
                    attributes: old.attributes.filter { !$0.isTransient }.map { DiagramAttribute($0) }, mark: .removed
                ))
                ends += matches.removedRelationships(of: old)
            case (nil, nil):
                continue
            }
            inheritance += matches.inheritance(source: pair.source, destination: pair.destination)
        }
        return ModelDiagram(
            title: "\(source.name) → \(destination.name)", entities: entities,
            relationships: pairingInverses(ends), inheritance: inheritance
        )
    }
}

/// The inference engine's pairing of two versions, with lookups by declaring entity: a property
/// inherited by sub-entities appears in the matching of each, and a moved one changes its
/// declaring entity.
private struct MigrationMatches {
    typealias Key = PropertyKey
    let entities: EntityMatches
    /// Destination (declaring entity, name) -> the source property it continues.
    private var sourceOfAttribute: [Key: InheritedProperty<Attribute>] = [:]
    private var sourceOfRelationship: [Key: InheritedProperty<Relationship>] = [:]
    /// Source (declaring entity, name) of every property that continues in the destination.
    private var keptSourceProperties: Set<Key> = []

    init(source: ModelVersion, destination: ModelVersion) {
        entities = EntityMatches(source: source, destination: destination)
        let properties = PropertyMatches(entities)
        for matching in properties.attributes.values {
            for pair in matching.pairs {
                guard let old = pair.source, let new = pair.destination else { continue }
                sourceOfAttribute[Key(new.declaringEntity, new.name)] = old
                keptSourceProperties.insert(Key(old.declaringEntity, old.name))
            }
        }
        for matching in properties.relationships.values {
            for pair in matching.pairs {
                guard let old = pair.source, let new = pair.destination else { continue }
                sourceOfRelationship[Key(new.declaringEntity, new.name)] = old
                keptSourceProperties.insert(Key(old.declaringEntity, old.name))
            }
        }
    }

    /// The node a source entity is drawn as: its destination name, or its own when removed.
    func node(ofSourceEntity name: String) -> String {
        entities.destinationName(of: name) ?? name
    }

    func keptEntity(_ old: Entity, as new: Entity) -> DiagramEntity {
        var notes: [String] = []
        if old.name != new.name { notes.append("renamed from \(old.name)") }
        let oldParent = old.parent.map(node(ofSourceEntity:))
        if oldParent != new.parent { notes.append("parent \(oldParent ?? "none") → \(new.parent ?? "none")") }
        if old.isAbstract != new.isAbstract { notes.append(new.isAbstract ? "made abstract" : "made concrete") }
        var attributes = new.attributes.filter { !$0.isTransient }.map { attribute in
            DiagramAttribute(attribute, mark: attributeMark(attribute, declaredBy: new.name))
        }
        attributes += old.attributes.filter { !$0.isTransient && !keptSourceProperties.contains(Key(old.name, $0.name)) }.map {
            DiagramAttribute($0, mark: .removed)
        }
        return DiagramEntity(name: new.name, isAbstract: new.isAbstract, attributes: attributes, mark: .changed(notes))
    }

    func attributeMark(_ attribute: Attribute, declaredBy entity: String) -> DiagramMark {
        guard let old = sourceOfAttribute[Key(entity, attribute.name)] else { return .added }
        var notes = movedNotes(old.name, old.declaringEntity, to: attribute.name, entity)
        if old.property.type != attribute.type { notes.append("\(old.property.type.nativeName) → \(attribute.type.nativeName)") }
        if old.property.isOptional != attribute.isOptional { notes.append(attribute.isOptional ? "made optional" : "made required") }
        if old.property.defaultValue != attribute.defaultValue { notes.append("default changed") }
        return .changed(notes)
    }

    func relationshipMark(_ relationship: Relationship, declaredBy entity: String) -> DiagramMark {
        guard let old = sourceOfRelationship[Key(entity, relationship.name)] else { return .added }
        var notes = movedNotes(old.name, old.declaringEntity, to: relationship.name, entity)
        let oldDestination = node(ofSourceEntity: old.property.destination)
        if oldDestination != relationship.destination { notes.append("destination \(oldDestination) → \(relationship.destination)") }
        let (was, now) = (RelationshipEnd.cardinality(of: old.property), RelationshipEnd.cardinality(of: relationship))
        if was != now { notes.append("\(was) → \(now)") }
        if old.property.isOrdered != relationship.isOrdered { notes.append(relationship.isOrdered ? "made ordered" : "made unordered") }
        if old.property.deleteRule != relationship.deleteRule {
            notes.append("delete rule \(old.property.deleteRule.rawValue) → \(relationship.deleteRule.rawValue)")
        }
        return .changed(notes)
    }

    /// The source entity's relationships the destination has no more, between the nodes their
    /// ends are drawn as.
    func removedRelationships(of old: Entity) -> [RelationshipEnd] {
        old.relationships.filter { !$0.isTransient && !keptSourceProperties.contains(Key(old.name, $0.name)) }.map { relationship in
            RelationshipEnd(
                entity: node(ofSourceEntity: old.name), relationship,
                destination: node(ofSourceEntity: relationship.destination), mark: .removed
            )
        }
    }

    /// The entity's parent link now (added when new) and before (removed when gone).
    func inheritance(source old: Entity?, destination new: Entity?) -> [DiagramInheritance] {
        let oldParent = old?.parent.map(node(ofSourceEntity:))
        var links: [DiagramInheritance] = []
        if let new, let parent = new.parent {
            links.append(DiagramInheritance(parent: parent, child: new.name, mark: old != nil && oldParent == parent ? .unchanged : .added))
        }
        if let old, let oldParent, oldParent != new?.parent {
            links.append(DiagramInheritance(parent: oldParent, child: node(ofSourceEntity: old.name), mark: .removed))
        }
        return links
    }

    private func movedNotes(_ oldName: String, _ oldEntity: String, to newName: String, _ newEntity: String) -> [String] {
        var notes: [String] = []
        if oldName != newName { notes.append("renamed from \(oldName)") }
        if node(ofSourceEntity: oldEntity) != newEntity { notes.append("moved from \(oldEntity)") }
        return notes
    }
}

/// A property by the entity that declares it and its name.
private struct PropertyKey: Hashable {
    var entity: String
    var name: String

    init(_ entity: String, _ name: String) {
        self.entity = entity
        self.name = name
    }
}
