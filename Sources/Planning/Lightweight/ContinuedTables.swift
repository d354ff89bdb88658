import ObjectModel
import SQLBuilding

/// Tables that continue from the source: renamed, their columns kept, renamed, retyped, given
/// defaults or made required, columns added and filled; then their rows and constraints.
extension LightweightDiff {
    mutating func continued(_ table: TableLayout, from sourceTable: TableLayout) {
        let columns = pairing.sourceColumnOf[table.name] ?? [:]
        if sourceTable.name != table.name {
            add(.renameTables, RenameTable(from: sourceTable.name, to: table.name, hasIdentity: table.column(named: "_pk")?.isIdentity == true))
        }
        for column in table.columns {
            guard let sourceName = columns[column.name], let sourceColumn = sourceTable.column(named: sourceName) else {
                addedColumn(column, to: table, from: sourceTable)
                continue
            }
            if sourceName != column.name {
                add(.renameColumns, RenameColumn(table: table.name, from: sourceName, to: column.name))
            }
            var sourceDefault = sourceColumn.defaultExpression
            if sourceColumn.type != column.type && changeType(column, of: table, from: sourceColumn, of: sourceTable).dropsDefault {
                sourceDefault = nil
            }
            if sourceDefault != column.defaultExpression {
                add(.add, ChangeColumnDefault(table: table.name, column: column.name, expression: column.defaultExpression))
            }
            if !sourceColumn.isNullable && column.isNullable {
                add(.relax, DropNotNull(table: sourceTable.name, column: sourceName))
            } else if sourceColumn.isNullable && !column.isNullable {
                if let value = column.defaultExpression {
                    add(.fill, BackfillNulls(table: table.name, column: column.name, value: value, entities: nil))
                } else {
                    add(.checkData, DataCheck(
                        table: sourceTable.name, offending: "\(ident: sourceName) IS NULL",
                        problem: "rows of \(sourceTable.name) without \(sourceName) (\(Self.describe(column.role)) made required)",
                        hint: Self.requiredHint
                    ))
                }
                add(.tighten, SetNotNull(table: table.name, column: column.name, scansRows: true))
            }
        }
        for copy in pairing.copiesOf[table.name] ?? [] {
            add(.fill, CopyColumnValues(
                table: table.name, column: copy.column, type: copy.type,
                from: pairing.currentName(ofColumn: copy.source, inSourceTable: sourceTable.name), entities: copy.entities
            ))
            if !columns.values.contains(copy.source) {
                consumedColumns.insert(ColumnKey(table: sourceTable.name, column: copy.source))
            }
        }
        if case .hierarchy = table.kind {
            entityRows(of: table, from: sourceTable)
            clearValues(of: table, from: sourceTable)
        }
        let constraints = ConstraintDiff(of: table, from: sourceTable, pairing: pairing)
        constraints.changes.forEach { add($0.phase, $0.change) }
        constraints.renames.forEach { renameConstraint($0.object, table: $0.table, from: $0.from, to: $0.to) }
    }

    /// The values that would not convert exactly are counted first; then the type changes.
    private mutating func changeType(_ column: ColumnLayout, of table: TableLayout, from sourceColumn: ColumnLayout, of sourceTable: TableLayout) -> AlterColumnType {
        guard let conversion = NumberColumnConversion(from: sourceColumn.type, to: column.type) else {
            let alter = AlterColumnType(table: table.name, column: column.name, from: sourceColumn.type, to: column.type)
                .describing(column, from: sourceColumn, of: table)
            add(.add, alter)
            return alter
        }
        if conversion.readsFloatText && !changes.contains(where: \.change.kind.isShortestFloatText) {
            add(.checkData, ShortestFloatText())
        }
        if let misfit = conversion.misfit(sourceColumn.name) {
            add(.checkData, DataCheck(
                table: sourceTable.name, offending: misfit,
                problem: "rows of \(sourceTable.name) whose \(sourceColumn.name) does not fit \(conversion.to.rawValue) (\(Self.describe(column.role)) changed from \(conversion.from.rawValue); \(NumberConversion.fitRule(from: conversion.from, to: conversion.to)))",
                hint: "change those values, or keep the type in this version and convert them with a mapping model"
            ))
        }
        let alter = AlterColumnType(
            table: table.name, column: column.name, from: sourceColumn.type, to: column.type,
            using: conversion.using(column.name), dropsDefault: conversion.dropsDefault && sourceColumn.defaultExpression != nil
        ).describing(column, from: sourceColumn, of: table)
        add(.add, alter)
        return alter
    }

    private mutating func addedColumn(_ column: ColumnLayout, to table: TableLayout, from sourceTable: TableLayout) {
        let addition = AddColumn(table: table.name, column: column)
        add(.add, addition)
        if !column.isNullable && !addition.isNotNullAtOnce {
            add(.checkData, DataCheck(
                table: sourceTable.name, offending: "true",
                problem: "rows of \(sourceTable.name) (\(Self.describe(column.role)) added as required; they have none)",
                hint: Self.requiredHint
            ))
            add(.tighten, SetNotNull(table: table.name, column: column.name, scansRows: true))
        }
        switch column.role {
        case .order(let owner, let name):
            if case .join(_, let ownerSide) = table.kind {
                let (partition, order) = ownerSide == name
                    ? (table.columns[0].name, table.columns[1].name)
                    : (table.columns[1].name, table.columns[0].name)
                add(.fill, FillOrderColumn(table: table.name, column: column.name, partitionBy: partition, orderBy: order, keys: [table.columns[0].name, table.columns[1].name], ownerTable: table.referencedTable(of: partition)))
                return
            }
            guard let relationship = destination.entity(named: owner)?.relationship(named: name),
                  let inverse = destination.inverse(of: relationship), let target = destination.entity(named: relationship.destination),
                  let ownerColumn = pairing.destinationColumns.column(ofProperty: inverse.name, of: target, in: destination) else { return }
            add(.fill, FillOrderColumn.oneToMany(table: table.name, column: column.name, ownerColumn: ownerColumn, ownerTable: table.referencedTable(of: ownerColumn)))
        case .toOne(_, let name):
            // A column split from one siblings shared is filled by its copies.
            if pairing.copiesOf[table.name]?.contains(where: { $0.column == column.name }) == true { return }
            // Only entities whose relationship of that name is stored in this column (a sibling's
            // may have a column of its own).
            for entity in table.entities where destination.entity(named: entity).flatMap({
                pairing.destinationColumns.column(ofProperty: name, of: $0, in: destination)
            }) == column.name {
                guard let sourceEntity = pairing.sourceEntity(ofDestination: entity), let holder = source.entity(named: sourceEntity),
                      let relationship = pairing.sourceRelationship(name, of: entity) else { continue }
                let declaring = LayoutPairing.declaringEntity(of: relationship, from: holder, in: source)
                guard let stored = declaring.relationship(named: relationship),
                      let links = pairing.sourceLinks(of: stored, declaredBy: declaring) else { continue }
                // Only a column holds at most one link per row; a join table may hold several.
                guard links.requiredNotNull != nil else {
                    problems.append("the links of \(entity).\(name) would move into column \(table.name).\(column.name) from join table \(links.table), where a row may have several; not inferred in place (write a mapping model)")
                    return
                }
                consume(links)
                add(.fill, FillToOneColumn(table: table.name, column: column.name, links: links))
                return
            }
        default:
            break
        }
    }
}

/// The rows of a continued hierarchy table: rows of removed entities deleted (links to them
/// checked and cleared first), renamed entities renamed, values of properties moved away cleared.
extension LightweightDiff {
    /// Rows of removed entities leave; rows of renamed entities get their new name.
    mutating func entityRows(of table: TableLayout, from sourceTable: TableLayout) {
        var renames: [(from: String, to: String)] = []
        var removed: [String] = []
        for name in sourceTable.entities {
            guard let entity = source.entity(named: name), !entity.isAbstract else { continue }
            guard let destinationName = pairing.destinationEntity(ofSource: name) else {
                removed.append(name)
                continue
            }
            if destinationName != name && pairing.destinationTable(ofEntity: destinationName) == table.name {
                renames.append((name, destinationName))
            }
        }
        if !removed.isEmpty {
            // Before anything is dropped or renamed: every link to those rows, by source names.
            for referencing in pairing.sourceLayout.tables where referencing.kind.isHierarchy {
                for key in referencing.foreignKeys where key.referencedTable == sourceTable.name {
                    if referencing.columns.first(where: { $0.name == key.column })?.isNullable == false {
                        // A required link cannot be cleared: name the rows before anything changes.
                        add(.checkData, DataCheck(
                            table: referencing.name, offending: "true",
                            problem: "rows of \(referencing.name) whose required \(key.column) links to rows of \(removed.joined(separator: ", ")) (removed)",
                            hint: "delete or relink those rows first, or write a mapping model that says what becomes of them",
                            linkingTo: (key.column, sourceTable.name, removed)
                        ))
                    }
                    add(.detachLinks, DetachReferences(table: referencing.name, column: key.column, referencedTable: sourceTable.name, entities: removed, key: key))
                }
            }
            add(.remove, DeleteRows(table: sourceTable.name, entities: removed, isLossy: true))
        }
        if !renames.isEmpty { add(.renameEntities, UpdateEntityNames(table: table.name, renames: renames)) }
    }

    /// A column kept for some entities of the hierarchy loses its values in the rows of the
    /// entities that no longer have the property (it moved down to a sub-entity).
    mutating func clearValues(of table: TableLayout, from sourceTable: TableLayout) {
        let columns = pairing.sourceColumnOf[table.name] ?? [:]
        // Each entity's columns once for the table, not once for each of its columns.
        var destinationStored: [String: Set<String>] = [:], sourceStored: [String: Set<String>] = [:]
        func stored(_ entity: Entity, in version: ModelVersion, columns: PropertyColumns, memo: inout [String: Set<String>]) -> Set<String> {
            if let known = memo[entity.name] { return known }
            let found = Self.storedColumns(of: entity, in: version, columns: columns)
            memo[entity.name] = found
            return found
        }
        for column in table.columns {
            switch column.role {
            case .attribute, .toOne: break
            default: continue
            }
            guard let sourceColumn = columns[column.name] else { continue }
            var cleared: [String] = []
            for name in table.entities {
                guard let entity = destination.entity(named: name), !entity.isAbstract,
                      !stored(entity, in: destination, columns: pairing.destinationColumns, memo: &destinationStored).contains(column.name),
                      let sourceName = pairing.sourceEntity(ofDestination: name), let sourceEntity = source.entity(named: sourceName),
                      pairing.sourceTable(ofEntity: sourceName) == sourceTable.name,
                      stored(sourceEntity, in: source, columns: pairing.sourceColumns, memo: &sourceStored).contains(sourceColumn) else { continue }
                cleared.append(name)
            }
            if !cleared.isEmpty { add(.fill, ClearValues(table: table.name, column: column.name, entities: cleared).describing(column, of: table)) }
        }
    }

    /// The columns an entity's rows use: its stored attributes and to-one columns, inherited ones included.
    static func storedColumns(of entity: Entity, in version: ModelVersion, columns: PropertyColumns) -> Set<String> {
        let names = version.allAttributes(of: entity).map(\.name) + version.allRelationships(of: entity).map(\.name)
        return Set(names.compactMap { columns.column(ofProperty: $0, of: entity, in: version) })
    }
}
