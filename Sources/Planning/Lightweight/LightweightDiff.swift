import ObjectModel
import SQLBuilding

/// The changes that turn a store laid out for the source version into one laid out for the
/// destination, computed from a `LayoutPairing` and nothing else.
///
/// Changes run in phases (`Phase`): checks of the rows first, then everything that loosens or
/// removes, then renames, then additions and data moves, then what the moves read, and last
/// the constraints the destination adds, validated once the data is in place.
struct LightweightDiff {
    enum Phase: Int, Comparable {
        /// Rows that would make a later change fail stop the step before anything changes.
        case checkData
        /// Constraints and indexes that change, so nothing below trips over them.
        case dropConstraints
        /// Columns made nullable, before any value is cleared.
        case relax
        /// Links to rows of removed entities cleared, so deleting those rows cascades nowhere.
        case detachLinks
        /// Rows of removed entities, removed columns and tables: before renames and additions,
        /// so a name given up can be taken again.
        case remove
        case renameTables
        case renameColumns
        case renameConstraints
        /// `_entity` of renamed entities, while the `_entity` checks are dropped.
        case renameEntities
        /// New tables and columns, type widenings, defaults.
        case add
        /// Rows and links copied, order numbered, NULLs backfilled, values cleared.
        case fill
        /// What the copies read: columns, join tables and rows that moved.
        case dropMoved
        /// NOT NULL, checks, foreign keys, uniques and indexes as the destination has them.
        case tighten

        static func < (lhs: Phase, rhs: Phase) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    struct ColumnKey: Hashable {
        var table: String
        var column: String
    }

    let pairing: LayoutPairing
    private(set) var changes: [(phase: Phase, change: any SchemaChange)] = []
    var problems: [String]
    /// Source columns and tables the copies read (source names).
    var consumedColumns: Set<ColumnKey> = []
    var consumedTables: Set<String> = []
    private var constraintRenames: [RenameConstraint] = []

    var schema: String { pairing.sourceLayout.schema }
    var source: ModelVersion { pairing.source }
    var destination: ModelVersion { pairing.destination }

    init(pairing: LayoutPairing) {
        self.pairing = pairing
        problems = pairing.problems
        for table in pairing.destinationLayout.tables {
            if let sourceName = pairing.sourceTableOf[table.name], let sourceTable = pairing.sourceLayout.table(named: sourceName) {
                continued(table, from: sourceTable)
            } else {
                added(table)
            }
        }
        dropUnclaimed()
        orderRenames()
    }

    /// The changes in the order they run: by phase, then as found.
    var orderedChanges: [any SchemaChange] {
        changes.enumerated().sorted { ($0.element.phase, $0.offset) < ($1.element.phase, $1.offset) }.map(\.element.change)
    }

    mutating func add(_ phase: Phase, _ change: any SchemaChange) {
        changes.append((phase, change))
    }

    // MARK: Continued tables

    private mutating func continued(_ table: TableLayout, from sourceTable: TableLayout) {
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
                from: currentName(ofColumn: copy.source, inSourceTable: sourceTable.name), entities: copy.entities
            ))
            if !columns.values.contains(copy.source) {
                consumedColumns.insert(ColumnKey(table: sourceTable.name, column: copy.source))
            }
        }
        if case .hierarchy = table.kind {
            entityRows(of: table, from: sourceTable)
            clearValues(of: table, from: sourceTable)
        }
        constraints(of: table, from: sourceTable)
    }

    /// The values that would not convert exactly are counted first; then the type changes.
    private mutating func changeType(_ column: ColumnLayout, of table: TableLayout, from sourceColumn: ColumnLayout, of sourceTable: TableLayout) -> AlterColumnType {
        guard let conversion = NumberColumnConversion(from: sourceColumn.type, to: column.type) else {
            let alter = AlterColumnType(table: table.name, column: column.name, from: sourceColumn.type, to: column.type)
            add(.add, alter)
            return alter
        }
        if conversion.readsFloatText && !changes.contains(where: { $0.change is ShortestFloatText }) {
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
        )
        add(.add, alter)
        return alter
    }

    static let requiredHint = "give those rows a value, or keep the property optional in this version"

    static func describe(_ role: ColumnLayout.Role) -> String {
        switch role {
        case .attribute(let entity, let name): "\(entity).\(name)"
        case .toOne(let entity, let relationship), .order(let entity, let relationship): "\(entity).\(relationship)"
        case .primaryKey: "_pk"
        case .entityName: "_entity"
        case .joinOwner, .joinTarget: "link"
        }
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
                add(.fill, FillOrderColumn(table: table.name, column: column.name, partitionBy: partition, orderBy: order, keys: [table.columns[0].name, table.columns[1].name]))
                return
            }
            guard let relationship = destination.entity(named: owner)?.relationship(named: name),
                  let inverse = destination.inverse(of: relationship), let target = destination.entity(named: relationship.destination),
                  let ownerColumn = pairing.destinationColumns.column(ofProperty: inverse.name, of: target, in: destination) else { return }
            add(.fill, FillOrderColumn.oneToMany(table: table.name, column: column.name, ownerColumn: ownerColumn))
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

    /// Rows of removed entities leave; rows of renamed entities get their new name.
    private mutating func entityRows(of table: TableLayout, from sourceTable: TableLayout) {
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
                    add(.detachLinks, DetachReferences(table: referencing.name, column: key.column, referencedTable: sourceTable.name, entities: removed))
                }
            }
            add(.remove, DeleteRows(table: sourceTable.name, entities: removed, isLossy: true))
        }
        if !renames.isEmpty { add(.renameEntities, UpdateEntityNames(table: table.name, renames: renames)) }
    }

    /// A column kept for some entities of the hierarchy loses its values in the rows of the
    /// entities that no longer have the property (it moved down to a sub-entity).
    private mutating func clearValues(of table: TableLayout, from sourceTable: TableLayout) {
        let columns = pairing.sourceColumnOf[table.name] ?? [:]
        for column in table.columns {
            switch column.role {
            case .attribute, .toOne: break
            default: continue
            }
            guard let sourceColumn = columns[column.name] else { continue }
            var cleared: [String] = []
            for name in table.entities {
                guard let entity = destination.entity(named: name), !entity.isAbstract,
                      !Self.storedColumns(of: entity, in: destination, columns: pairing.destinationColumns).contains(column.name),
                      let sourceName = pairing.sourceEntity(ofDestination: name), let sourceEntity = source.entity(named: sourceName),
                      pairing.sourceTable(ofEntity: sourceName) == sourceTable.name,
                      Self.storedColumns(of: sourceEntity, in: source, columns: pairing.sourceColumns).contains(sourceColumn) else { continue }
                cleared.append(name)
            }
            if !cleared.isEmpty { add(.fill, ClearValues(table: table.name, column: column.name, entities: cleared)) }
        }
    }

    /// The columns an entity's rows use: its stored attributes and to-one columns, inherited ones included.
    static func storedColumns(of entity: Entity, in version: ModelVersion, columns: PropertyColumns) -> Set<String> {
        let names = version.allAttributes(of: entity).map(\.name) + version.allRelationships(of: entity).map(\.name)
        return Set(names.compactMap { columns.column(ofProperty: $0, of: entity, in: version) })
    }

    // MARK: What nothing continues

    /// Source columns and tables without a continuation: dropped after the copies that read
    /// them, or as removed (lossy) before anything else.
    private mutating func dropUnclaimed() {
        for table in pairing.destinationLayout.tables {
            guard let sourceName = pairing.sourceTableOf[table.name], let sourceTable = pairing.sourceLayout.table(named: sourceName) else { continue }
            let claimed = Set((pairing.sourceColumnOf[table.name] ?? [:]).values)
            for column in sourceTable.columns where !claimed.contains(column.name) {
                if consumedColumns.contains(ColumnKey(table: sourceName, column: column.name)) {
                    // Still there while the copies run: its name cannot be taken before.
                    if table.column(named: column.name) != nil {
                        problems.append("column \(table.name).\(column.name) would be added while the old \(column.name) is still being copied elsewhere; not supported in place")
                    }
                    add(.dropMoved, DropColumn(table: table.name, column: column.name, reason: .moved))
                } else if case .order(let owner, let name) = column.role, relationshipIsKept(name, of: owner) {
                    add(.remove, DropColumn(table: sourceName, column: column.name, reason: .madeUnordered))
                } else {
                    add(.remove, DropColumn(table: sourceName, column: column.name, reason: .removed))
                }
            }
        }
        var removed: [String] = []
        var moved: [String] = []
        for table in pairing.sourceLayout.tables where pairing.destinationTable(continuing: table.name) == nil {
            if consumedTables.contains(table.name) {
                if pairing.destinationLayout.table(named: table.name) != nil {
                    problems.append("table \(table.name) would be created while the old \(table.name) is still being copied; not supported in place")
                }
                moved.append(table.name)
            } else {
                removed.append(table.name)
            }
        }
        if !removed.isEmpty { add(.remove, DropTables(tables: removed, isLossy: true)) }
        if !moved.isEmpty { add(.dropMoved, DropTables(tables: moved, isLossy: false)) }
    }

    private func relationshipIsKept(_ name: String, of sourceEntity: String) -> Bool {
        guard let mapping = pairing.mapping.mapping(forSourceEntity: sourceEntity) else { return false }
        return mapping.relationshipMappings.contains { $0.source == name && $0.destination != nil }
    }

    // MARK: Renames

    mutating func renameConstraint(_ kind: RenameConstraint.Kind, table: String, from: String, to: String) {
        guard from != to else { return }
        constraintRenames.append(RenameConstraint(kind: kind, table: table, from: from, to: to))
    }

    /// Renames of one kind ordered so that no name is taken when it is given.
    private mutating func orderRenames() {
        let tables = changes.filter { $0.phase == .renameTables }.compactMap { $0.change as? RenameTable }
        let columns = changes.filter { $0.phase == .renameColumns }.compactMap { $0.change as? RenameColumn }
        changes.removeAll { $0.phase == .renameTables || $0.phase == .renameColumns }
        guard let orderedTables = RenameOrder.sorted(tables, from: \.from, to: \.to) else {
            problems.append("tables swap names (\(tables.map { "\($0.from) -> \($0.to)" }.joined(separator: ", ")))")
            return
        }
        orderedTables.forEach { add(.renameTables, $0) }
        for table in Set(columns.map(\.table)).sorted() {
            let renames = columns.filter { $0.table == table }
            guard let ordered = RenameOrder.sorted(renames, from: \.from, to: \.to) else {
                problems.append("columns of \(table) swap names (\(renames.map { "\($0.from) -> \($0.to)" }.joined(separator: ", ")))")
                return
            }
            ordered.forEach { add(.renameColumns, $0) }
        }
        guard let constraints = RenameOrder.sorted(constraintRenames, from: \.from, to: \.to) else {
            problems.append("constraints swap names")
            return
        }
        constraints.forEach { add(.renameConstraints, $0) }
    }
}
