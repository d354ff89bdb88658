/// Changes of a lightweight step that lean on each other where the offline step runs them all
/// in one transaction, rearranged for `apply --online`, where the application writes between
/// phases:
/// 1. rows moved to another table stay in the old one until the switch-over. A foreign key
///    that pointed at them there keeps acting until then (dropped in the switch-over, before
///    the old table or the moved rows go, so its delete rule does not act on the rows linking
///    to them); the key that replaces it is built beside it (`ForeignKeyBeside`). The old
///    table is rebuilt beside itself with the rows that stay (`ShadowTable`), which takes the
///    place of the moved rows' delete, the old table's new `_entity` check and the drops of
///    its moved columns. Where no shadow can be built (a foreign key of the destination points
///    at the table that the shadow cannot take over, `ShadowTable.takesOver`, or the
///    switch-over has other work the shadow would not carry), the moved rows are deleted and
///    the `_entity` check added in the switch-over, after them.
/// 2. rows of removed entities are deleted and the links to them cleared after the renames of
///    tables and columns, not before: the triggers that keep new writes right meanwhile then
///    name the tables and columns as they stay. A link whose column or table is removed
///    needs no clearing (the drop takes its foreign key).
/// 3. a foreign key whose delete rule changes (its column and referenced table continue) is
///    dropped in the same transaction that adds the new one `NOT VALID`, not at the step's
///    start: in between, no key would act on the application's deletes of referenced rows,
///    and a link left dangling would fail the new key's validation. A trigger keeps the old
///    rule acting until the switch-over (`ReplacedKeyRule`).
enum OnlineArrangement {
    typealias ColumnKey = LightweightDiff.ColumnKey

    static func arranged(_ changes: [any SchemaChange], schema: String) -> [any SchemaChange] {
        replacedInPlace(removalsAfterRenames(aroundMoves(changes, schema: schema)))
    }

    // MARK: 3. Keys replaced in place

    private static func replacedInPlace(_ changes: [any SchemaChange]) -> [any SchemaChange] {
        var drops: [ColumnKey: String] = [:]
        for change in changes {
            if case .dropConstraint(let drop) = change.kind, !drop.goesWithItsColumn, let column = drop.continuingColumn { drops[column] = drop.name }
        }
        var replaced: Set<ColumnKey> = []
        for change in changes {
            guard case .addForeignKey(let key) = change.kind else { continue }
            let column = ColumnKey(table: key.table, column: key.foreignKey.column)
            if let replacing = key.replacing, drops[column] == replacing.name { replaced.insert(column) }
        }
        guard !replaced.isEmpty else { return changes }
        return changes.compactMap { change in
            if case .dropConstraint(let drop) = change.kind, !drop.goesWithItsColumn, let column = drop.continuingColumn, replaced.contains(column) { return nil }
            if case .addForeignKey(var key) = change.kind, replaced.contains(ColumnKey(table: key.table, column: key.foreignKey.column)) {
                key.dropsReplacedKey = true
                return key
            }
            return change
        }
    }

    // MARK: 1. Moves

    private static func aroundMoves(_ changes: [any SchemaChange], schema: String) -> [any SchemaChange] {
        let targets = Set(changes.compactMap(\.kind.rowsMovedTo))
        guard !targets.isEmpty else { return changes }
        let sources = Set(changes.compactMap(\.kind.rowsMovedFrom))
        var replacing: [ColumnKey: String] = [:]
        for change in changes {
            if case .dropConstraint(let drop) = change.kind, let column = drop.continuingColumn { replacing[column] = drop.name }
        }
        var besides: [ColumnKey: ForeignKeyBeside] = [:]
        for change in changes {
            guard case .addForeignKey(let key) = change.kind, targets.contains(key.foreignKey.referencedTable) else { continue }
            let column = ColumnKey(table: key.table, column: key.foreignKey.column)
            if let replaced = replacing[column] { besides[column] = ForeignKeyBeside(key: key, replaced: replaced) }
        }
        let shadows = shadowTables(changes, schema: schema)
        let shadowed = Set(shadows.map(\.table.name))
        let arranged = changes.compactMap { change -> (any SchemaChange)? in
            if case .deleteRows(let delete) = change.kind, !delete.isLossy, shadowed.contains(delete.table) { return nil }
            if case .dropColumn(let drop) = change.kind, drop.reason == .moved, shadowed.contains(drop.table) { return nil }
            if case .dropColumn(var drop) = change.kind, let table = drop.keyedTableAfterRenames, shadowed.contains(table) {
                // The shadow takes the table's place in the switch-over: the column goes first, as before.
                drop.keyedTableAfterRenames = nil
                return drop
            }
            if case .addCheck(let check) = change.kind, shadowed.contains(check.table), case .entityIn = check.check.kind { return nil }
            if case .dropConstraint(let drop) = change.kind, let column = drop.continuingColumn, let beside = besides[column] {
                return AtSwitchOver(deferred: beside.switchOver(in: schema))
            }
            if case .addForeignKey(let key) = change.kind, let beside = besides[ColumnKey(table: key.table, column: key.foreignKey.column)] {
                return beside
            }
            if case .addCheck(let check) = change.kind, sources.contains(check.table), case .entityIn = check.check.kind {
                return AtSwitchOver(deferred: check.statements(in: schema))
            }
            return change
        }
        return arranged + shadows
    }

    /// The tables moved rows leave that can be rebuilt beside themselves, one per table: none
    /// when a change of the step leaves other work than drops to the switch-over, or a foreign
    /// key points at one that its shadow cannot take over (`ShadowTable.takesOver`).
    private static func shadowTables(_ changes: [any SchemaChange], schema: String) -> [ShadowTable] {
        let deferring = changes.contains { change in
            guard !change.kind.onlineOrder.contains(.dropsAtSwitchOver) else { return false }
            switch change.onlineForm(in: schema) {
            case .atSwitchOver, .phasesThenAtSwitchOver: return true
            default: return false
            }
        }
        guard !deferring else { return [] }
        var shadows: [ShadowTable] = []
        let sources = Set(changes.compactMap(\.kind.rowsMovedFrom))
        for change in changes {
            guard case .deleteRows(let delete) = change.kind, !delete.isLossy else { continue }
            guard let staying = delete.staying, staying.layout.name == delete.table,
                  staying.referencing.allSatisfy({ ShadowTable.takesOver($0.key, of: $0.table, shadowing: sources, in: changes) }) else { return [] }
            if let index = shadows.firstIndex(where: { $0.table.name == delete.table }) {
                shadows[index].moved += delete.entities
                shadows[index].deletes.append(delete)
            } else {
                shadows.append(ShadowTable(table: staying.layout, moved: delete.entities, deletes: [delete], referencing: staying.referencing))
            }
        }
        return shadows
    }

    // MARK: 2. Removals

    private static func removalsAfterRenames(_ changes: [any SchemaChange]) -> [any SchemaChange] {
        let isRemoval: (any SchemaChange) -> Bool = { $0.kind.onlineOrder.contains(.removal) }
        guard changes.contains(where: isRemoval),
              let lastRename = changes.lastIndex(where: { $0.kind.onlineOrder.contains(.rename) }) else { return changes.filter { !isCleared($0, in: changes) } }
        var tables: [String: String] = [:]
        var columns: [ColumnKey: String] = [:]
        for change in changes {
            if case .renameTable(let rename) = change.kind { tables[rename.from] = rename.to }
            if case .renameColumn(let rename) = change.kind { columns[ColumnKey(table: rename.table, column: rename.from)] = rename.to }
        }
        let table = { (name: String) in tables[name] ?? name }
        var moved: [any SchemaChange] = []
        for change in changes where isRemoval(change) && !isCleared(change, in: changes) {
            if case .detachReferences(var detach) = change.kind {
                detach.table = table(detach.table)
                detach.column = columns[ColumnKey(table: detach.table, column: detach.column)] ?? detach.column
                detach.referencedTable = table(detach.referencedTable)
                moved.append(detach)
            } else if case .deleteRows(var delete) = change.kind {
                delete.table = table(delete.table)
                moved.append(delete)
            }
        }
        var arranged: [any SchemaChange] = []
        for (index, change) in changes.enumerated() {
            if !isRemoval(change) { arranged.append(change) }
            if index == lastRename { arranged += moved }
        }
        return arranged
    }

    /// A link in a column or table the step drops before: nothing left to clear.
    private static func isCleared(_ change: any SchemaChange, in changes: [any SchemaChange]) -> Bool {
        guard case .detachReferences(let detach) = change.kind else { return false }
        return changes.contains { other in
            if case .dropColumn(let drop) = other.kind { return drop.reason == .removed && drop.table == detach.table && drop.column == detach.column }
            if case .dropTables(let drop) = other.kind { return drop.isLossy && drop.tables.contains(detach.table) }
            return false
        }
    }
}

/// What `OnlineArrangement` must know of a change to place it.
struct OnlineOrder: OptionSet {
    let rawValue: Int

    /// Renames a table or a column: the removals go after the last one (2.).
    static let rename = OnlineOrder(rawValue: 1 << 0)
    /// Clears links to, or deletes, rows of removed entities: after the last rename (2.).
    static let removal = OnlineOrder(rawValue: 1 << 1)
    /// Leaves to the switch-over only drops (rows, columns, tables) or an identity continued:
    /// the table moved rows leave can still be rebuilt beside itself (1.). Any other change
    /// with work at the switch-over rules the shadow out.
    static let dropsAtSwitchOver = OnlineOrder(rawValue: 1 << 2)
}

extension ChangeKind {
    /// Every kind's place in the online order, decided here (no default: a new kind of change
    /// does not compile until it has one).
    var onlineOrder: OnlineOrder {
        switch self {
        case .renameTable, .renameColumn: [.rename]
        case .detachReferences: [.removal]
        case .deleteRows(let delete): delete.isLossy ? [.removal, .dropsAtSwitchOver] : [.dropsAtSwitchOver]
        case .dropColumn, .dropTables, .resetIdentity: [.dropsAtSwitchOver]
        case .addCheck, .addColumn, .addForeignKey, .addTable, .addUnique, .alterColumnType, .backfillNulls, .changeColumnDefault,
             .clearValues, .copyColumnValues, .copyRows, .createIndex, .dataCheck, .dropConstraint, .dropIndex, .dropNotNull,
             .dropUnique, .fillJoinTable, .fillOrderColumn, .fillToOneColumn, .renameConstraint, .setNotNull, .shortestFloatText,
             .updateEntityNames:
            []
        case .atSwitchOver, .foreignKeyBeside, .shadowTable, .rebuildBesideOthers, .jointSwap, .builtOnRebuilt:
            []
        }
    }

    /// The table rows move to (1.).
    var rowsMovedTo: String? {
        guard case .copyRows(let copy) = self else { return nil }
        return copy.toTable
    }

    /// The table moved rows leave (1.), not one whose rows are removed.
    var rowsMovedFrom: String? {
        guard case .deleteRows(let delete) = self, !delete.isLossy else { return nil }
        return delete.table
    }
}
