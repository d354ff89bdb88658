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
    ///
    /// Tables do not depend on the schema: computed once per version (`LaidOutTables`).
    public init(version: ModelVersion, schema: String) {
        self.init(schema: schema, tables: version.cached(LaidOutTables.self) { LaidOutTables(version: $0) }.tables)
    }
}

/// A version's tables, as `StoreLayout(version:schema:)` lays them out in any schema.
struct LaidOutTables: Sendable {
    var tables: [TableLayout]

    init(version: ModelVersion) {
        let columns = version.propertyColumns
        var tables: [TableLayout] = []
        for root in version.rootEntities {
            tables.append(StoreLayout.hierarchyTable(root: root, in: version, columns: columns))
        }
        for entity in version.entities {
            for relationship in entity.relationships where StoreLayout.storage(of: relationship, in: entity, version: version) == .joinTable {
                tables.append(StoreLayout.joinTable(entity: entity, relationship: relationship, in: version))
            }
        }
        // Ordered one-to-many: the order lives beside the inverse's to-one column, named after
        // it (`recipe_pk` -> `recipe_order`); inverses that share a column share the order.
        for entity in version.entities {
            for relationship in entity.relationships where relationship.isOrdered
                && StoreLayout.storage(of: relationship, in: entity, version: version) == .inverseColumn {
                let destination = version.entity(named: relationship.destination)!
                let index = tables.firstIndex { $0.name == StoreNaming.tableName(entity: version.root(of: destination).name) }!
                let inverse = version.inverse(of: relationship)!
                let holder = version.ancestry(of: destination).last { $0.relationship(named: inverse.name) != nil } ?? destination
                guard let name = columns.orderColumn(ofToOne: inverse.name, declaredBy: holder.name),
                      tables[index].column(named: name) == nil else { continue }
                tables[index].columns.append(ColumnLayout(
                    name: name, type: "integer",
                    isNullable: true, defaultValue: nil, isIdentity: false,
                    role: .order(entity: entity.name, relationship: relationship.name)
                ))
            }
        }
        self.tables = tables
    }
}

extension StoreLayout {
    public typealias RelationshipStorage = ObjectModel.RelationshipStorage

    /// Where a relationship's links are kept.
    public static func storage(of relationship: Relationship, in entity: Entity, version: ModelVersion) -> RelationshipStorage {
        version.storage(of: relationship, in: entity)
    }

    static func hierarchyTable(root: Entity, in version: ModelVersion, columns: PropertyColumns) -> TableLayout {
        let tableName = StoreNaming.tableName(entity: root.name)
        let members = version.hierarchy(of: root)
        let concrete = members.filter { !$0.isAbstract }.map(\.name)
        var table = TableLayout(
            name: tableName, kind: .hierarchy(root: root.name), entities: members.map(\.name),
            columns: [], primaryKey: ["_pk"], checks: [], foreignKeys: [], uniqueConstraints: [], indexes: []
        )
        table.columns.append(ColumnLayout(name: "_pk", type: "bigint", isNullable: false, defaultValue: nil, isIdentity: true, role: .primaryKey))
        table.columns.append(ColumnLayout(
            name: "_entity", type: "text", isNullable: false,
            defaultValue: concrete.count == 1 ? .string(concrete[0]) : nil,
            isIdentity: false, role: .entityName
        ))
        table.checks.append(.entityIn(concrete, table: tableName))
        // A column shared by siblings is required for the entities of every declaration that
        // requires it, in one check; its default is kept only when every declaration agrees.
        var requiredBy: [(column: String, entities: [String])] = []
        var defaults: [String: [SQL?]] = [:]
        for entity in members {
            let isRoot = entity.name == root.name
            let scope = version.hierarchy(of: entity).map(\.name)
            func require(_ column: String) {
                if let index = requiredBy.firstIndex(where: { $0.column == column }) {
                    requiredBy[index].entities += scope
                } else {
                    requiredBy.append((column, scope))
                }
            }
            for attribute in entity.attributes where !attribute.isTransient {
                let column = columns.column(ofProperty: attribute.name, declaredBy: entity.name)!
                let defaultValue = attribute.defaultValue.flatMap { DefaultValue.parse($0, as: attribute.type) }
                if !attribute.isOptional && !isRoot { require(column) }
                defaults[column, default: []].append(defaultValue.map { ColumnTypes.defaultExpression($0, type: attribute.type) })
                if table.column(named: column) != nil { continue }  // shared with a sibling
                table.columns.append(ColumnLayout(
                    name: column, type: ColumnTypes.sqlType(for: attribute.type),
                    isNullable: attribute.isOptional || !isRoot, defaultValue: defaultValue,
                    isIdentity: false, role: .attribute(entity: entity.name, name: attribute.name)
                ))
            }
            for relationship in entity.relationships where storage(of: relationship, in: entity, version: version) == .column {
                let column = columns.column(ofProperty: relationship.name, declaredBy: entity.name)!
                let isRequired = !relationship.isOptional
                if isRequired && !isRoot { require(column) }
                if table.column(named: column) != nil { continue }  // shared with a sibling
                let destination = version.root(of: version.entity(named: relationship.destination)!)
                table.columns.append(ColumnLayout(
                    name: column, type: "bigint", isNullable: !(isRequired && isRoot), defaultValue: nil,
                    isIdentity: false, role: .toOne(entity: entity.name, relationship: relationship.name)
                ))
                table.foreignKeys.append(ForeignKey(
                    name: StoreNaming.shortened(tableName + "_" + column + "_fkey"), column: column,
                    referencedTable: StoreNaming.tableName(entity: destination.name),
                    onDelete: onDelete(for: relationship, in: version)
                ))
                table.indexes.append(IndexLayout(name: StoreNaming.shortened(tableName + "_" + column + "_idx"), columns: [column]))
            }
            for constraint in entity.uniquenessConstraints {
                let names = constraint.compactMap { columns.column(ofProperty: $0, of: entity, in: version) }
                guard names.count == constraint.count else { continue }
                table.uniqueConstraints.append(UniqueConstraint(
                    name: StoreNaming.shortened(tableName + "_" + names.joined(separator: "_") + "_key"),
                    columns: names, entityScope: isRoot ? nil : scope
                ))
            }
            for index in entity.indexes {
                let names = index.properties.compactMap { columns.column(ofProperty: $0, of: entity, in: version) }
                guard !names.isEmpty, names.count == index.properties.count else { continue }
                table.indexes.append(IndexLayout(name: StoreNaming.shortened(tableName + "_" + StoreNaming.snakeCase(index.name) + "_idx"), columns: names))
            }
        }
        for (column, values) in defaults where Set(values).count > 1 {
            table.columns[table.columns.firstIndex { $0.name == column }!].defaultValue = nil
        }
        for (column, entities) in requiredBy {
            table.checks.append(.required(column, for: entities, table: tableName))
        }
        return table
    }

    /// Deleting a destination row applies the rule of the relationship that points back at
    /// this row (the inverse): `Chef.recipes` Cascade means deleting a chef deletes its recipes.
    /// Without an inverse, nothing owns the link: a nullable column is cleared, a required one
    /// blocks the delete.
    static func onDelete(for relationship: Relationship, in version: ModelVersion) -> String {
        ColumnTypes.onDeleteAction(version.foreignKeyRule(of: relationship))
    }

    static func joinTable(entity: Entity, relationship: Relationship, in version: ModelVersion) -> TableLayout {
        let name = StoreNaming.joinTableName(entity: entity.name, relationship: relationship.name)
        let ownerColumn = StoreNaming.foreignKeyColumnName(relationship: entity.name)
        let targetColumn = StoreNaming.foreignKeyColumnName(relationship: relationship.name)
        let ownerTable = StoreNaming.tableName(entity: version.root(of: entity).name)
        let targetTable = StoreNaming.tableName(entity: version.root(of: version.entity(named: relationship.destination)!).name)
        var columns = [
            ColumnLayout(name: ownerColumn, type: "bigint", isNullable: false, defaultValue: nil, isIdentity: false, role: .joinOwner),
            ColumnLayout(name: targetColumn, type: "bigint", isNullable: false, defaultValue: nil, isIdentity: false, role: .joinTarget),
        ]
        if relationship.isOrdered {
            columns.append(ColumnLayout(
                name: StoreNaming.orderColumnName(relationship: relationship.name), type: "integer", isNullable: true,
                defaultValue: nil, isIdentity: false, role: .order(entity: entity.name, relationship: relationship.name)
            ))
        }
        // A relationship that is its own inverse (`Person.friends`) keeps one order.
        if let inverse = version.inverse(of: relationship), inverse.isOrdered, inverse.isToMany,
           inverse != relationship {
            columns.append(ColumnLayout(
                name: StoreNaming.orderColumnName(relationship: inverse.name), type: "integer", isNullable: true,
                defaultValue: nil, isIdentity: false, role: .order(entity: relationship.destination, relationship: inverse.name)
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
