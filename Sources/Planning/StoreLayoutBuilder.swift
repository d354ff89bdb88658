import ObjectModel
import SQLBuilding

extension StoreLayout {
    /// The layout of a validated model version in `schema`.
    ///
    /// 1. One table per hierarchy: `_pk`, `_entity`, then every stored attribute and to-one
    ///    column of every entity in it.
    /// 2. Each to-many goes either to the inverse's to-one column (one-to-many) or to a join
    ///    table (many-to-many, or no to-one inverse), created once per relationship pair.
    /// 3. Constraints: NOT NULL where every row has the property, CHECKs scoped to sub-entities
    ///    otherwise, foreign keys with the delete rule, indexes on every foreign-key column.
    public init(version: ModelVersion, schema: String) {
        var tables: [TableLayout] = []
        for root in version.rootEntities {
            tables.append(Self.hierarchyTable(root: root, in: version))
        }
        for entity in version.entities {
            for relationship in entity.relationships where Self.storage(of: relationship, in: entity, version: version) == .joinTable {
                tables.append(Self.joinTable(entity: entity, relationship: relationship, in: version))
            }
        }
        // Ordered one-to-many: the order lives beside the inverse's to-one column.
        for entity in version.entities {
            for relationship in entity.relationships where relationship.isOrdered
                && Self.storage(of: relationship, in: entity, version: version) == .inverseColumn {
                let destination = version.root(of: version.entity(named: relationship.destination)!)
                let index = tables.firstIndex { $0.name == StoreNaming.tableName(entity: destination.name) }!
                // Named after the inverse's column (`recipe_pk` -> `recipe_order`): unique in the
                // table, where several entities may each have an ordered `items` pointing here.
                let inverse = version.inverse(of: relationship)!
                tables[index].columns.append(ColumnLayout(
                    name: StoreNaming.orderColumnName(relationship: inverse.name), type: "integer",
                    isNullable: true, defaultExpression: nil, isIdentity: false,
                    role: .order(entity: entity.name, relationship: relationship.name)
                ))
            }
        }
        self.init(schema: schema, tables: tables)
    }

    public enum RelationshipStorage: Sendable, Hashable {
        /// Not stored (transient).
        case none
        /// A `<name>_pk` column in the entity's table.
        case column
        /// Stored by the inverse: its to-one column, or the join table it owns.
        case inverseColumn
        case inverseJoinTable
        case joinTable
    }

    /// Where a relationship's links are kept.
    public static func storage(of relationship: Relationship, in entity: Entity, version: ModelVersion) -> RelationshipStorage {
        if relationship.isTransient { return .none }
        let inverse = version.inverse(of: relationship).flatMap { $0.isTransient ? nil : $0 }
        let ownsPair: Bool = {
            guard let inverse else { return true }
            return (entity.name, relationship.name) <= (relationship.destination, inverse.name)
        }()
        switch (relationship.isToMany, inverse?.isToMany) {
        case (false, nil), (false, true?): return .column
        case (false, false?): return ownsPair ? .column : .inverseColumn
        case (true, false?): return .inverseColumn
        case (true, true?): return ownsPair ? .joinTable : .inverseJoinTable
        case (true, nil): return .joinTable
        }
    }

    static func hierarchyTable(root: Entity, in version: ModelVersion) -> TableLayout {
        let tableName = StoreNaming.tableName(entity: root.name)
        let members = version.hierarchy(of: root)
        let concrete = members.filter { !$0.isAbstract }.map(\.name)
        var table = TableLayout(
            name: tableName, kind: .hierarchy(root: root.name), entities: members.map(\.name),
            columns: [], primaryKey: ["_pk"], checks: [], foreignKeys: [], uniqueConstraints: [], indexes: []
        )
        table.columns.append(ColumnLayout(name: "_pk", type: "bigint", isNullable: false, defaultExpression: nil, isIdentity: true, role: .primaryKey))
        table.columns.append(ColumnLayout(
            name: "_entity", type: "text", isNullable: false,
            defaultExpression: concrete.count == 1 ? quoteLiteral(concrete[0]) : nil,
            isIdentity: false, role: .entityName
        ))
        table.checks.append(CheckConstraint(
            name: StoreNaming.shortened(tableName + "_entity_check"),
            expression: "\(quoteIdentifier("_entity")) IN (\(concrete.map(quoteLiteral).joined(separator: ", ")))"
        ))
        for entity in members {
            let isRoot = entity.name == root.name
            let scope = version.hierarchy(of: entity).map(\.name)
            func requireNotNull(_ column: String) {
                table.checks.append(CheckConstraint(
                    name: StoreNaming.shortened(tableName + "_" + column + "_required"),
                    expression: "\(quoteIdentifier("_entity")) NOT IN (\(scope.map(quoteLiteral).joined(separator: ", "))) OR \(quoteIdentifier(column)) IS NOT NULL"
                ))
            }
            for attribute in entity.attributes where !attribute.isTransient {
                let column = StoreNaming.columnName(attribute: attribute.name)
                if table.column(named: column) != nil { continue }  // shared with a sibling
                let defaultExpression = attribute.defaultValue
                    .flatMap { DefaultValue.parse($0, as: attribute.type) }
                    .map { ColumnTypes.defaultExpression($0, type: attribute.type) }
                table.columns.append(ColumnLayout(
                    name: column, type: ColumnTypes.sqlType(for: attribute.type),
                    isNullable: attribute.isOptional || !isRoot, defaultExpression: defaultExpression,
                    isIdentity: false, role: .attribute(entity: entity.name, name: attribute.name)
                ))
                if !attribute.isOptional && !isRoot { requireNotNull(column) }
            }
            for relationship in entity.relationships where storage(of: relationship, in: entity, version: version) == .column {
                let column = StoreNaming.foreignKeyColumnName(relationship: relationship.name)
                let destination = version.root(of: version.entity(named: relationship.destination)!)
                let isRequired = !relationship.isOptional
                table.columns.append(ColumnLayout(
                    name: column, type: "bigint", isNullable: !(isRequired && isRoot), defaultExpression: nil,
                    isIdentity: false, role: .toOne(entity: entity.name, relationship: relationship.name)
                ))
                if isRequired && !isRoot { requireNotNull(column) }
                table.foreignKeys.append(ForeignKey(
                    name: StoreNaming.shortened(tableName + "_" + column + "_fkey"), column: column,
                    referencedTable: StoreNaming.tableName(entity: destination.name),
                    onDelete: onDelete(for: relationship, in: version)
                ))
                table.indexes.append(IndexLayout(name: StoreNaming.shortened(tableName + "_" + column + "_idx"), columns: [column]))
            }
            for constraint in entity.uniquenessConstraints {
                let columns = constraint.compactMap { columnName(ofProperty: $0, entity: entity, in: version) }
                guard columns.count == constraint.count else { continue }
                table.uniqueConstraints.append(UniqueConstraint(
                    name: StoreNaming.shortened(tableName + "_" + columns.joined(separator: "_") + "_key"),
                    columns: columns, entityScope: isRoot ? nil : scope
                ))
            }
            for index in entity.indexes {
                let columns = index.properties.compactMap { columnName(ofProperty: $0, entity: entity, in: version) }
                guard !columns.isEmpty, columns.count == index.properties.count else { continue }
                table.indexes.append(IndexLayout(name: StoreNaming.shortened(tableName + "_" + StoreNaming.snakeCase(index.name) + "_idx"), columns: columns))
            }
        }
        return table
    }

    /// Deleting a destination row applies the rule of the relationship that points back at
    /// this row (the inverse): `Chef.recipes` Cascade means deleting a chef deletes its recipes.
    /// Without an inverse, nothing owns the link: a nullable column is cleared, a required one
    /// blocks the delete.
    static func onDelete(for relationship: Relationship, in version: ModelVersion) -> String {
        if let inverse = version.inverse(of: relationship) {
            return ColumnTypes.onDeleteAction(inverse.deleteRule)
        }
        return relationship.isOptional ? "SET NULL" : "NO ACTION"
    }

    /// The column of an attribute or stored to-one relationship, as seen from `entity`.
    static func columnName(ofProperty name: String, entity: Entity, in version: ModelVersion) -> String? {
        if let attribute = version.allAttributes(of: entity).first(where: { $0.name == name }), !attribute.isTransient {
            return StoreNaming.columnName(attribute: attribute.name)
        }
        if let relationship = version.allRelationships(of: entity).first(where: { $0.name == name }), !relationship.isToMany, !relationship.isTransient {
            return StoreNaming.foreignKeyColumnName(relationship: relationship.name)
        }
        return nil
    }

    static func joinTable(entity: Entity, relationship: Relationship, in version: ModelVersion) -> TableLayout {
        let name = StoreNaming.joinTableName(entity: entity.name, relationship: relationship.name)
        let ownerColumn = StoreNaming.foreignKeyColumnName(relationship: entity.name)
        let targetColumn = StoreNaming.foreignKeyColumnName(relationship: relationship.name)
        let ownerTable = StoreNaming.tableName(entity: version.root(of: entity).name)
        let targetTable = StoreNaming.tableName(entity: version.root(of: version.entity(named: relationship.destination)!).name)
        var columns = [
            ColumnLayout(name: ownerColumn, type: "bigint", isNullable: false, defaultExpression: nil, isIdentity: false, role: .joinOwner),
            ColumnLayout(name: targetColumn, type: "bigint", isNullable: false, defaultExpression: nil, isIdentity: false, role: .joinTarget),
        ]
        if relationship.isOrdered {
            columns.append(ColumnLayout(
                name: StoreNaming.orderColumnName(relationship: relationship.name), type: "integer", isNullable: true,
                defaultExpression: nil, isIdentity: false, role: .order(entity: entity.name, relationship: relationship.name)
            ))
        }
        if let inverse = version.inverse(of: relationship), inverse.isOrdered, inverse.isToMany {
            columns.append(ColumnLayout(
                name: StoreNaming.orderColumnName(relationship: inverse.name), type: "integer", isNullable: true,
                defaultExpression: nil, isIdentity: false, role: .order(entity: relationship.destination, relationship: inverse.name)
            ))
        }
        return TableLayout(
            name: name, kind: .join(entity: entity.name, relationship: relationship.name), entities: [],
            columns: columns, primaryKey: [ownerColumn, targetColumn], checks: [],
            foreignKeys: [
                ForeignKey(name: StoreNaming.shortened(name + "_" + ownerColumn + "_fkey"), column: ownerColumn, referencedTable: ownerTable, onDelete: "CASCADE"),
                ForeignKey(name: StoreNaming.shortened(name + "_" + targetColumn + "_fkey"), column: targetColumn, referencedTable: targetTable, onDelete: "CASCADE"),
            ],
            uniqueConstraints: [],
            indexes: [IndexLayout(name: StoreNaming.shortened(name + "_" + targetColumn + "_idx"), columns: [targetColumn])]
        )
    }
}
