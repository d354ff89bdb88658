import ObjectModel
import SQLBuilding

/// Constraints and indexes of a continued table. A source constraint is kept when the
/// destination has the same one once columns and tables are renamed (renamed itself if its name
/// changed); otherwise it is dropped first and the destination's is added at the end.
struct ConstraintDiff {
    typealias Phase = LightweightDiff.Phase
    typealias ColumnKey = LightweightDiff.ColumnKey

    let pairing: LayoutPairing
    /// The changes found, in the order found, and the constraints to rename
    /// (`LightweightDiff.renameConstraint`).
    private(set) var changes: [(phase: Phase, change: any SchemaChange)] = []
    private(set) var renames: [RenameConstraint] = []

    var schema: String { pairing.sourceLayout.schema }
    var source: ModelVersion { pairing.source }

    init(of table: TableLayout, from sourceTable: TableLayout, pairing: LayoutPairing) {
        self.pairing = pairing
        let columns = pairing.sourceColumnOf[table.name] ?? [:]
        let renamed = Dictionary(uniqueKeysWithValues: columns.map { ($0.value, $0.key) })
        foreignKeys(of: table, from: sourceTable, columns: columns, renamed: renamed)
        checks(of: table, from: sourceTable, columns: columns, renamed: renamed)
        uniques(of: table, from: sourceTable, columns: columns, renamed: renamed)
        indexes(of: table, from: sourceTable, renamed: renamed)
    }

    private mutating func add(_ phase: Phase, _ change: any SchemaChange) {
        changes.append((phase, change))
    }

    private mutating func renameConstraint(_ kind: RenameConstraint.Kind, table: String, from: String, to: String) {
        renames.append(RenameConstraint(object: kind, table: table, from: from, to: to))
    }

    /// Kept when the column, the referenced table and the delete rule all continue.
    private mutating func foreignKeys(of table: TableLayout, from sourceTable: TableLayout, columns: [String: String], renamed: [String: String]) {
        var kept: Set<String> = []
        var dropped: [ForeignKey] = []
        for foreignKey in sourceTable.foreignKeys {
            if let column = renamed[foreignKey.column], let referenced = pairing.destinationTable(continuing: foreignKey.referencedTable),
               let match = table.foreignKeys.first(where: {
                   $0.column == column && $0.referencedTable == referenced && $0.onDelete == foreignKey.onDelete && !kept.contains($0.name)
               }) {
                kept.insert(match.name)
                renameConstraint(.constraint, table: table.name, from: foreignKey.name, to: match.name)
            } else {
                dropped.append(foreignKey)
                add(.dropConstraints, DropConstraint(
                    table: sourceTable.name, name: foreignKey.name, goesWithItsColumn: renamed[foreignKey.column] == nil,
                    continuingColumn: renamed[foreignKey.column].map { ColumnKey(table: table.name, column: $0) }
                ))
            }
        }
        for foreignKey in table.foreignKeys where !kept.contains(foreignKey.name) {
            let replaced = dropped.first {
                renamed[$0.column] == foreignKey.column && pairing.destinationTable(continuing: $0.referencedTable) == foreignKey.referencedTable
            }
            add(.tighten, AddForeignKey(
                table: table.name, foreignKey: foreignKey, scansRows: columns[foreignKey.column] != nil, replacing: replaced
            ))
        }
    }

    /// Kept when the check is of the same kind once columns are renamed; a check naming a
    /// renamed entity is recreated after `_entity` is updated.
    private mutating func checks(of table: TableLayout, from sourceTable: TableLayout, columns: [String: String], renamed: [String: String]) {
        var kept: Set<String> = []
        for check in sourceTable.checks {
            if let kind = check.kind.renamingColumns(renamed),
               let match = table.checks.first(where: { $0.kind == kind && !kept.contains($0.name) }) {
                kept.insert(match.name)
                renameConstraint(.constraint, table: table.name, from: check.name, to: match.name)
            } else {
                add(.dropConstraints, DropConstraint(table: sourceTable.name, name: check.name))
            }
        }
        for check in table.checks where !kept.contains(check.name) {
            requiredCheck(check, of: table, from: sourceTable, columns: columns)
            add(.tighten, AddCheck(table: table.name, check: check, scansRows: true))
        }
    }

    /// A new check requiring a column for some sub-entities: NULLs of the rows in its scope are
    /// backfilled with the default, or, without one, counted before anything changes.
    private mutating func requiredCheck(_ check: CheckConstraint, of table: TableLayout, from sourceTable: TableLayout, columns: [String: String]) {
        guard case .requiredFor(let name, let scope) = check.kind, let column = table.column(named: name) else { return }
        let sourceScope = scope.compactMap { pairing.sourceEntity(ofDestination: $0) }
            .filter { pairing.sourceTable(ofEntity: $0) == sourceTable.name && source.entity(named: $0)?.isAbstract == false }
        let sourceColumn = columns[column.name]
        if let sourceColumn, isRequired(sourceColumn, for: sourceScope, in: sourceTable) { return }
        if let value = column.defaultExpression {
            if sourceColumn != nil {
                add(.fill, BackfillNulls(table: table.name, column: column.name, value: value, entities: scope))
            }
            return
        }
        guard !sourceScope.isEmpty else { return }
        var offending: SQL = "\(ident: "_entity") IN (\(literals: sourceScope))"
        if let sourceColumn { offending.append(" AND \(ident: sourceColumn) IS NULL") }
        add(.checkData, DataCheck(
            table: sourceTable.name, offending: offending,
            problem: "rows of \(sourceScope.joined(separator: ", ")) without \(sourceColumn ?? column.name) (\(LightweightDiff.describe(column.role)) \(sourceColumn == nil ? "added as" : "made") required)",
            hint: LightweightDiff.requiredHint
        ))
    }

    /// Whether the source already required a value in the column for these entities' rows.
    private func isRequired(_ column: String, for entities: [String], in sourceTable: TableLayout) -> Bool {
        if sourceTable.column(named: column)?.isNullable == false { return true }
        guard let check = sourceTable.checks.first(where: { $0.kind.requiredColumn == column }) else { return false }
        return Set(entities).isSubset(of: check.kind.entities)
    }

    /// Kept when the columns continue and the entity scope is the same.
    private mutating func uniques(of table: TableLayout, from sourceTable: TableLayout, columns: [String: String], renamed: [String: String]) {
        var kept: Set<String> = []
        for unique in sourceTable.uniqueConstraints {
            let mapped = unique.columns.compactMap { renamed[$0] }
            if mapped.count == unique.columns.count,
               let match = table.uniqueConstraints.first(where: { $0.columns == mapped && $0.entityScope == unique.entityScope && !kept.contains($0.name) }) {
                kept.insert(match.name)
                renameConstraint(unique.entityScope == nil ? .constraint : .index, table: table.name, from: unique.name, to: match.name)
            } else {
                add(.dropConstraints, DropUnique(table: sourceTable.name, unique: unique))
            }
        }
        for unique in table.uniqueConstraints where !kept.contains(unique.name) {
            let sourceColumns = unique.columns.compactMap { columns[$0] }
            if sourceColumns.count == unique.columns.count {
                duplicateCheck(unique, sourceColumns: sourceColumns, from: sourceTable)
            }
            add(.tighten, AddUnique(table: table.name, unique: unique, scansRows: true))
        }
    }

    /// Rows sharing the values of a new uniqueness constraint are counted before anything changes.
    private mutating func duplicateCheck(_ unique: UniqueConstraint, sourceColumns: [String], from sourceTable: TableLayout) {
        let names = unique.entityScope.map { $0.compactMap { pairing.sourceEntity(ofDestination: $0) } }
        if names?.isEmpty == true { return }
        // The source already had these rows unique.
        if sourceTable.uniqueConstraints.contains(where: { existing in
            existing.columns == sourceColumns && (existing.entityScope.map { scope in names.map { Set($0).isSubset(of: scope) } ?? false } ?? true)
        }) { return }
        let scope: SQL? = names.map { "\(ident: "_entity") IN (\(literals: $0))" }
        var offending: SQL = "(\(idents: sourceColumns)) IN (SELECT \(idents: sourceColumns) FROM \(ident: schema, sourceTable.name)"
        if let scope { offending.append(" WHERE \(scope)") }
        offending.append(" GROUP BY \(idents: sourceColumns) HAVING count(*) > 1)")
        if let scope { offending.append(" AND \(scope)") }
        add(.checkData, DataCheck(
            table: sourceTable.name, offending: offending,
            problem: "rows of \(sourceTable.name) sharing (\(sourceColumns.joined(separator: ", "))) (new uniqueness constraint \(unique.name))",
            hint: "make those rows unique, or drop the uniqueness constraint from this version"
        ))
    }

    /// Kept when the columns continue; an index whose name already fits is preferred.
    private mutating func indexes(of table: TableLayout, from sourceTable: TableLayout, renamed: [String: String]) {
        var kept: Set<String> = []
        for index in sourceTable.indexes {
            let mapped = index.columns.compactMap { renamed[$0] }
            let candidates = mapped.count == index.columns.count
                ? table.indexes.filter { $0.columns == mapped && !kept.contains($0.name) }
                : []
            if let match = candidates.first(where: { $0.name == index.name }) ?? candidates.first {
                kept.insert(match.name)
                renameConstraint(.index, table: table.name, from: index.name, to: match.name)
            } else {
                // An index of the same name built for the destination needs the name first.
                let rebuilt = table.indexes.contains { $0.name == index.name }
                add(.dropConstraints, DropIndex(table: sourceTable.name, name: index.name, goesWithItsColumn: mapped.count != index.columns.count && !rebuilt))
            }
        }
        for index in table.indexes where !kept.contains(index.name) {
            add(.tighten, CreateIndex(table: table.name, index: index, scansRows: true))
        }
    }
}
