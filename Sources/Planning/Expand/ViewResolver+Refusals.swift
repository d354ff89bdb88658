import ObjectModel

/// 1. Changes no view can serve, read from the mapping alone: each named once, at the entity
///    that declares the property (inherited properties appear in every sub-entity's mapping).
extension ViewResolver {
    mutating func mappingRefusals() {
        for mapping in pairing.mapping.entityMappings {
            guard let sourceName = mapping.sourceEntity, let old = source.entity(named: sourceName) else { continue }
            guard let destinationName = mapping.destinationEntity, let new = destination.entity(named: destinationName) else {
                if !mapping.sourceIsAbstract { removedEntityRefusals(sourceName) }
                continue
            }
            let oldTable = pairing.sourceTable(ofEntity: sourceName)
            let newTable = pairing.destinationTable(ofEntity: destinationName)
            if !old.isAbstract, pairing.destinationTable(continuing: oldTable) != newTable {
                refuse(.expandRowsMoved, "entity \(sourceName): its rows move from table \(oldTable) to \(newTable), and a view of \(oldTable) reads one table")
            }
            attributeRefusals(mapping, old: old, new: new)
            relationshipRefusals(mapping, old: old, new: new)
            uniquenessRefusals(mapping, old: old, new: new)
        }
    }

    /// A removed entity is served from its own table, kept until `complete`; refused when the
    /// table is not its own, or cannot be kept, or would deny the new version's deletes.
    private mutating func removedEntityRefusals(_ name: String) {
        let table = pairing.sourceTable(ofEntity: name)
        guard !keptTables.contains(table) else {
            for key in pairing.sourceLayout.table(named: table)?.foreignKeys ?? []
            where !keptTables.contains(key.referencedTable) && ["RESTRICT", "NO ACTION"].contains(key.onDelete.uppercased()) {
                refuse(.expandRemovedLinkDenies, "entity \(name) removed: \(table).\(key.column) denies deleting the rows of \(key.referencedTable) it links to (\(key.onDelete)), which would stop the new version's deletes until complete")
            }
            return
        }
        let keptEntities = (pairing.sourceLayout.table(named: table)?.entities ?? []).filter {
            $0 != name && pairing.destinationEntity(ofSource: $0) != nil
        }
        if !keptEntities.isEmpty {
            refuse(.expandRemovedEntitySharesTable, "entity \(name) removed: its rows share table \(table) with \(keptEntities.joined(separator: ", ")), which the new version keeps, so the step deletes them and the old version would find them gone")
        } else if pairing.destinationLayout.table(named: table) != nil {
            refuse(.expandRemovedTableTaken, "entity \(name) removed: the new version has a table named \(table), so its rows cannot be kept there until complete")
        } else {
            refuse(.expandEntityRemoved, "entity \(name) removed: its table \(table) cannot be kept until complete, so the old version would find its rows gone")
        }
    }

    private mutating func attributeRefusals(_ mapping: EntityMapping, old: Entity, new: Entity) {
        for property in mapping.attributeMappings {
            if property.kind == .remove, let name = property.source, let attribute = old.attribute(named: name),
               !attribute.isOptional, attribute.defaultValue == nil {
                refuse(.expandRemovedRequired, "\(old.name).\(name) removed: it is required without a default, and the old version would read NULL in it")
            }
            guard let name = property.destination, new.attribute(named: name) != nil else { continue }
            for case .converted(let from, let to) in property.changes {
                refuse(.expandLossyTypeChange, "\(new.name).\(name) converted from \(from.rawValue) to \(to.rawValue): a value the old version writes may not fit (\(NumberConversion.fitRule(from: from, to: to)))")
            }
        }
    }

    private mutating func relationshipRefusals(_ mapping: EntityMapping, old: Entity, new: Entity) {
        for property in mapping.relationshipMappings {
            if property.kind == .remove, let name = property.source, let relationship = old.relationship(named: name),
               !relationship.isToMany, !relationship.isOptional, !relationship.isTransient {
                refuse(.expandRemovedRequired, "\(old.name).\(name) removed: it is a required to-one, and the old version would read NULL in it")
            }
            guard let name = property.destination, let relationship = new.relationship(named: name),
                  !relationship.isToMany, !relationship.isOptional, !relationship.isTransient else { continue }
            if property.kind == .add {
                refuse(.expandRequiredLink, "\(new.name).\(name) added as a required to-one: rows the old version inserts cannot give it a value")
            } else if property.changes.contains(where: { if case .madeRequired = $0 { return true } else { return false } }) {
                refuse(.expandRequiredLink, "\(new.name).\(name) made required: the old version may write rows without it")
            }
        }
    }

    /// A uniqueness constraint of the new version that none of the old entity's covers (the
    /// same properties, by their old names): the store enforces it at once, and rows the old
    /// version writes, which it never promised, may break it.
    private mutating func uniquenessRefusals(_ mapping: EntityMapping, old: Entity, new: Entity) {
        var oldName: [String: String] = [:]
        for property in mapping.attributeMappings + mapping.relationshipMappings {
            if let destination = property.destination, let source = property.source { oldName[destination] = source }
        }
        let existing = Set(old.uniquenessConstraints.map(Set.init))
        for constraint in new.uniquenessConstraints {
            let asOld = constraint.compactMap { oldName[$0] }
            guard asOld.count < constraint.count || !existing.contains(Set(asOld)) else { continue }
            refuse(.expandUniqueAdded, "\(new.name): uniqueness constraint (\(constraint.joined(separator: ", "))) added: the store enforces it at once, and rows the old version writes may break it")
        }
    }
}
