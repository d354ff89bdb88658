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

    // MARK: Renames

    mutating func renameConstraint(_ kind: RenameConstraint.Kind, table: String, from: String, to: String) {
        guard from != to else { return }
        constraintRenames.append(RenameConstraint(object: kind, table: table, from: from, to: to))
    }

    /// Renames of one kind ordered so that no name is taken when it is given.
    private mutating func orderRenames() {
        let tables = changes.filter { $0.phase == .renameTables }.compactMap { change -> RenameTable? in
            guard case .renameTable(let rename) = change.change.kind else { return nil }
            return rename
        }
        let columns = changes.filter { $0.phase == .renameColumns }.compactMap { change -> RenameColumn? in
            guard case .renameColumn(let rename) = change.change.kind else { return nil }
            return rename
        }
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

/// What nothing in the destination continues: source columns and tables dropped.
extension LightweightDiff {
    /// Source columns and tables without a continuation: dropped after the copies that read
    /// them, or as removed (lossy) before anything else.
    mutating func dropUnclaimed() {
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
                    // Its key must not point at a table the step drops first (a removed entity's).
                    let keyed = table.column(named: column.name) == nil && sourceTable.foreignKeys.contains {
                        $0.column == column.name && pairing.destinationTable(continuing: $0.referencedTable) != nil
                    }
                    add(.remove, DropColumn(table: sourceName, column: column.name, reason: .removed, keyedTableAfterRenames: keyed ? table.name : nil))
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
}

extension LightweightDiff {
    /// Before anything changes: rows whose required link points at a row moving out of
    /// `sourceTable` with `delete` stop the step (source names; `delete` has the destination's).
    mutating func checkRequiredLinks(of delete: DeleteRows, movingOutOf sourceTable: String) {
        for (referencing, key) in delete.movedLinks {
            guard let required = DeleteRows.requiredEntities(of: key.column, in: referencing),
                  let sourceReferencing = pairing.sourceTableOf[referencing.name],
                  let sourceColumn = pairing.sourceColumnOf[referencing.name]?[key.column] else { continue }
            // Entities new in the destination have no rows to check.
            let sourceEntities = required.compactMap(pairing.sourceEntity(ofDestination:))
            guard required.isEmpty || !sourceEntities.isEmpty else { continue }
            var offending: SQL = required.isEmpty ? "true" : "\(ident: "_entity") IN (\(literals: sourceEntities))"
            if sourceReferencing == sourceTable { offending.append(" AND \(ident: "_entity") NOT IN (\(literals: delete.entities))") }
            add(.checkData, DataCheck(
                table: sourceReferencing, offending: offending,
                problem: DeleteRows.requiredLinkProblem(sourceReferencing, sourceColumn, delete.entities, sourceTable),
                hint: DeleteRows.requiredLinkHint, linkingTo: (sourceColumn, sourceTable, delete.entities)
            ))
        }
    }

    /// What `plan` names of the links to moved rows that are cleared or dropped: a link whose
    /// relationship has an inverse is named already, as the moved entity's inverse removed
    /// (`Hazard.dataLosses`); one without is named here.
    func lostLinks(of delete: DeleteRows) -> [Hazard] {
        guard !delete.isLossy, let staying = delete.staying else { return [] }
        let moved = delete.entities.joined(separator: ", ")
        return staying.referencing.compactMap { referencing, key in
            let owner: (entity: String, relationship: String)
            switch (referencing.kind, referencing.column(named: key.column)?.role) {
            case (.hierarchy, .toOne(let entity, let relationship)?), (.join(let entity, let relationship), .joinTarget?):
                owner = (entity, relationship)
            default:
                return nil
            }
            // A required link is never cleared: it stops the step.
            guard !referencing.kind.isHierarchy || DeleteRows.requiredEntities(of: key.column, in: referencing) == nil,
                  let sourceEntity = pairing.sourceEntity(ofDestination: owner.entity), let entity = source.entity(named: sourceEntity),
                  let sourceName = pairing.sourceRelationship(owner.relationship, of: owner.entity),
                  let relationship = LayoutPairing.declaringEntity(of: sourceName, from: entity, in: source).relationship(named: sourceName),
                  source.inverse(of: relationship) == nil else { return nil }
            let what = referencing.kind.isHierarchy ? "cleared" : "dropped"
            return .dataLoss("\(owner.entity).\(owner.relationship): its links to rows of \(moved) are \(what) (\(moved) moved out of \(delete.table), so the link cannot stay)")
        }
    }
}
