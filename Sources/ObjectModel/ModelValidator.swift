/// Checks a version for everything that would make it unusable as a store definition.
/// Returns every problem found, each naming the file, entity and property.
public enum ModelValidator {
    /// Computed once per version (`ModelVersion.cached`): planning asks for every version on the way.
    public static func validate(_ version: ModelVersion) -> [ModelIssue] {
        version.cached(Validation.self) { Validation(issues: check($0)) }.issues
    }

    private struct Validation: Sendable {
        var issues: [ModelIssue]
    }

    private static func check(_ version: ModelVersion) -> [ModelIssue] {
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
        let cyclic = entitiesInInheritanceCycles(version)
        for entity in version.entities {
            if let parent = entity.parent, version.entity(named: parent) == nil {
                report(entity.name, nil, "parent entity '\(parent)' does not exist")
            } else if cyclic.contains(entity.name) {
                report(entity.name, nil, "inheritance cycle: \(cycleDescription(entity, in: version))")
            }
        }

        // 3. Properties of each entity, with what its ancestors define.
        validatePropertiesDownEachHierarchy(version, skipping: cyclic, report: report)

        // 4. Names that meet in PostgreSQL: tables, columns, join tables.
        if issues.isEmpty {
            validateStoreNames(version, report: report)
        }
        return issues
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

    /// `isInherited` tells whether an ancestor defines a property of that name.
    static func validateProperties(
        of entity: Entity, in version: ModelVersion, isInherited: (String) -> Bool,
        report: (String?, String?, String) -> Void
    ) {
        var names: Set<String> = []
        for name in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
            if name.isEmpty {
                report(entity.name, nil, "a property has an empty name")
            } else if !names.insert(name).inserted {
                report(entity.name, name, "the property is defined twice")
            } else if isInherited(name) {
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
        for constraint in entity.uniquenessConstraints {
            for name in constraint where !names.contains(name) && !isInherited(name) {
                report(entity.name, name, "the uniqueness constraint names a property that does not exist")
            }
        }
        for index in entity.indexes {
            for name in index.properties where !names.contains(name) && !isInherited(name) {
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
        if relationship.minCount < 0 || relationship.maxCount < 0 {
            report(entity.name, relationship.name, "minCount \(relationship.minCount) and maxCount \(relationship.maxCount) must not be negative")
        } else if relationship.maxCount != 0 && relationship.minCount > relationship.maxCount {
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
        let columns = version.propertyColumns
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
            for key in entity.uniquenessConstraints.map({ ("uniqueness constraint", $0) }) + entity.indexes.map({ ("index '\($0.name)'", $0.properties) })
                where key.1.count > StoreLimits.maximumIndexColumns {
                report(entity.name, nil, "\(key.0) has \(key.1.count) properties; PostgreSQL indexes at most \(StoreLimits.maximumIndexColumns) columns")
            }
        }
        validateColumnCounts(version, columns: columns, report: report)
    }

    /// A hierarchy's table holds at most PostgreSQL's column limit, system, foreign-key and order
    /// columns included; the property that crosses it is named.
    static func validateColumnCounts(_ version: ModelVersion, columns: PropertyColumns, report: (String?, String?, String) -> Void) {
        for root in version.rootEntities {
            var seen = Set(StoreNaming.systemColumns)
            for entity in version.hierarchy(of: root) {
                for name in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
                    let before = seen.count
                    if let column = columns.column(ofProperty: name, declaredBy: entity.name) { seen.insert(column) }
                    if let order = columns.orderColumn(ofToOne: name, declaredBy: entity.name) { seen.insert(order) }
                    if before <= StoreLimits.maximumColumns, seen.count > StoreLimits.maximumColumns {
                        report(entity.name, name, "table '\(StoreNaming.tableName(entity: root.name))' of the hierarchy of \(root.name) would need more than PostgreSQL's \(StoreLimits.maximumColumns) columns (system columns included) from this property on; move properties to related entities")
                    }
                }
            }
        }
    }
}
