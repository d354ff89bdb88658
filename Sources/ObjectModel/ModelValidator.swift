/// Checks a version for everything that would make it unusable as a store definition.
/// Returns every problem found, each naming the file, entity and property.
public enum ModelValidator {
    public static func validate(_ version: ModelVersion) -> [ModelIssue] {
        var issues: [ModelIssue] = []
        func report(_ entity: String?, _ property: String? = nil, _ message: String) {
            issues.append(ModelIssue(file: version.sourceFile, entity: entity, property: property, message: message))
        }

        // 1. Entity names: present, unique, distinct tables.
        var entityNames: Set<String> = []
        for entity in version.entities where !entityNames.insert(entity.name).inserted {
            report(entity.name, nil, "the entity is defined twice")
        }

        // 2. Inheritance: parents exist, no cycles.
        var acyclic: Set<String> = []
        for entity in version.entities {
            if let parent = entity.parent, version.entity(named: parent) == nil {
                report(entity.name, nil, "parent entity '\(parent)' does not exist")
                continue
            }
            if hasInheritanceCycle(entity, in: version) {
                report(entity.name, nil, "inheritance cycle: \(cycleDescription(entity, in: version))")
            } else {
                acyclic.insert(entity.name)
            }
        }

        // 3. Properties of each entity.
        for entity in version.entities {
            validateProperties(of: entity, in: version, isAcyclic: acyclic.contains(entity.name), report: report)
        }

        // 4. Names that meet in PostgreSQL: tables, columns, join tables.
        if issues.isEmpty {
            validateStoreNames(version, report: report)
        }
        return issues
    }

    static func hasInheritanceCycle(_ entity: Entity, in version: ModelVersion) -> Bool {
        var seen: Set<String> = [entity.name]
        var current = entity
        while let parentName = current.parent, let parent = version.entity(named: parentName) {
            if !seen.insert(parentName).inserted { return true }
            current = parent
        }
        return false
    }

    static func cycleDescription(_ entity: Entity, in version: ModelVersion) -> String {
        var names = [entity.name]
        var current = entity
        while let parentName = current.parent, let parent = version.entity(named: parentName) {
            names.append(parentName)
            if names.dropLast().contains(parentName) { break }
            current = parent
        }
        return names.joined(separator: " -> ")
    }

    static func validateProperties(
        of entity: Entity, in version: ModelVersion, isAcyclic: Bool,
        report: (String?, String?, String) -> Void
    ) {
        var names: Set<String> = []
        let inherited = isAcyclic ? version.ancestry(of: entity).dropLast().flatMap { ancestor in
            ancestor.attributes.map(\.name) + ancestor.relationships.map(\.name)
        } : []
        for name in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
            if name.isEmpty {
                report(entity.name, nil, "a property has an empty name")
            } else if !names.insert(name).inserted {
                report(entity.name, name, "the property is defined twice")
            } else if inherited.contains(name) {
                report(entity.name, name, "the property is already defined by a parent entity")
            }
        }
        for attribute in entity.attributes {
            if attribute.type == .undefined && !attribute.isTransient {
                report(entity.name, attribute.name, "a stored attribute needs a type")
            }
            if let text = attribute.defaultValue, attribute.type != .undefined, DefaultValue.parse(text, as: attribute.type) == nil {
                report(entity.name, attribute.name, "default '\(text)' does not parse as \(attribute.type.rawValue)")
            }
        }
        for relationship in entity.relationships {
            validateRelationship(relationship, of: entity, in: version, report: report)
        }
        let allNames = Set(version.allAttributes(of: entity).map(\.name) + version.allRelationships(of: entity).map(\.name))
        for constraint in entity.uniquenessConstraints {
            for name in constraint where !allNames.contains(name) {
                report(entity.name, name, "the uniqueness constraint names a property that does not exist")
            }
        }
        for index in entity.indexes {
            for name in index.properties where !allNames.contains(name) {
                report(entity.name, name, "index '\(index.name)' names a property that does not exist")
            }
        }
    }

    static func validateRelationship(
        _ relationship: Relationship, of entity: Entity, in version: ModelVersion,
        report: (String?, String?, String) -> Void
    ) {
        guard let destination = version.entity(named: relationship.destination) else {
            let what = relationship.destination.isEmpty ? "has no destination entity" : "destination entity '\(relationship.destination)' does not exist"
            report(entity.name, relationship.name, what)
            return
        }
        if relationship.maxCount != 0 && relationship.minCount > relationship.maxCount {
            report(entity.name, relationship.name, "minCount \(relationship.minCount) is above maxCount \(relationship.maxCount)")
        }
        guard let inverseName = relationship.inverse else { return }
        guard let inverse = version.allRelationships(of: destination).first(where: { $0.name == inverseName }) else {
            report(entity.name, relationship.name, "inverse '\(inverseName)' does not exist on \(destination.name)")
            return
        }
        let related = Set(version.ancestry(of: entity).map(\.name) + version.hierarchy(of: entity).map(\.name))
        if !related.contains(inverse.destination) {
            report(entity.name, relationship.name, "inverse mismatch: \(destination.name).\(inverseName) points to \(inverse.destination), not \(entity.name)")
        }
        if relationship.isTransient != inverse.isTransient {
            report(entity.name, relationship.name, "the relationship and its inverse \(destination.name).\(inverseName) must both be transient or both stored")
        }
    }

    /// Tables and columns that two different model elements would map onto.
    static func validateStoreNames(_ version: ModelVersion, report: (String?, String?, String) -> Void) {
        var tables: [String: String] = [:]
        for root in version.rootEntities {
            let table = StoreNaming.tableName(entity: root.name)
            if let other = tables[table] {
                report(root.name, nil, "maps onto table '\(table)', like entity \(other)")
            }
            tables[table] = root.name
        }
        let columns = PropertyColumns(version: version)
        for (declaration, column) in columns.declarations(in: version) where StoreNaming.systemColumns.contains(column) {
            report(declaration.entity, declaration.property, "maps onto the system column '\(column)'")
        }
        for collision in columns.collisions {
            report(collision.declaration.entity, collision.declaration.property, "maps onto column '\(collision.column)' of table '\(collision.table)', like \(collision.other)")
        }
        for entity in version.entities {
            for relationship in entity.relationships where !relationship.isTransient && relationship.isToMany {
                let join = StoreNaming.joinTableName(entity: entity.name, relationship: relationship.name)
                if let other = tables[join] {
                    report(entity.name, relationship.name, "its join table '\(join)' collides with the table of \(other)")
                }
                tables[join] = "\(entity.name).\(relationship.name)"
                if StoreNaming.columnName(attribute: entity.name) == StoreNaming.columnName(attribute: relationship.name) {
                    report(entity.name, relationship.name, "the join table would have two '\(StoreNaming.foreignKeyColumnName(relationship: relationship.name))' columns; rename the relationship")
                }
            }
        }
    }
}
