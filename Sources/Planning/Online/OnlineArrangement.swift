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
        for case let drop as DropConstraint in changes where !drop.goesWithItsColumn {
            if let column = drop.continuingColumn { drops[column] = drop.name }
        }
        var replaced: Set<ColumnKey> = []
        for case let key as AddForeignKey in changes {
            let column = ColumnKey(table: key.table, column: key.foreignKey.column)
            if let replacing = key.replacing, drops[column] == replacing.name { replaced.insert(column) }
        }
        guard !replaced.isEmpty else { return changes }
        return changes.compactMap { change in
            if let drop = change as? DropConstraint, !drop.goesWithItsColumn, let column = drop.continuingColumn, replaced.contains(column) { return nil }
            if var key = change as? AddForeignKey, replaced.contains(ColumnKey(table: key.table, column: key.foreignKey.column)) {
                key.dropsReplacedKey = true
                return key
            }
            return change
        }
    }

    // MARK: 1. Moves

    private static func aroundMoves(_ changes: [any SchemaChange], schema: String) -> [any SchemaChange] {
        let targets = Set(changes.compactMap { ($0 as? CopyRows)?.toTable })
        guard !targets.isEmpty else { return changes }
        let sources = Set(changes.compactMap { ($0 as? DeleteRows).flatMap { $0.isLossy ? nil : $0.table } })
        var replacing: [ColumnKey: String] = [:]
        for case let drop as DropConstraint in changes {
            if let column = drop.continuingColumn { replacing[column] = drop.name }
        }
        var besides: [ColumnKey: ForeignKeyBeside] = [:]
        for case let key as AddForeignKey in changes where targets.contains(key.foreignKey.referencedTable) {
            let column = ColumnKey(table: key.table, column: key.foreignKey.column)
            if let replaced = replacing[column] { besides[column] = ForeignKeyBeside(key: key, replaced: replaced) }
        }
        let shadows = shadowTables(changes, schema: schema)
        let shadowed = Set(shadows.map(\.table.name))
        let arranged = changes.compactMap { change -> (any SchemaChange)? in
            if let delete = change as? DeleteRows, !delete.isLossy, shadowed.contains(delete.table) { return nil }
            if let drop = change as? DropColumn, drop.reason == .moved, shadowed.contains(drop.table) { return nil }
            if var drop = change as? DropColumn, let table = drop.keyedTableAfterRenames, shadowed.contains(table) {
                // The shadow takes the table's place in the switch-over: the column goes first, as before.
                drop.keyedTableAfterRenames = nil
                return drop
            }
            if let check = change as? AddCheck, shadowed.contains(check.table), case .entityIn = check.check.kind { return nil }
            if let drop = change as? DropConstraint, let column = drop.continuingColumn, let beside = besides[column] {
                return AtSwitchOver(deferred: beside.switchOver(in: schema))
            }
            if let key = change as? AddForeignKey, let beside = besides[ColumnKey(table: key.table, column: key.foreignKey.column)] {
                return beside
            }
            if let check = change as? AddCheck, sources.contains(check.table), case .entityIn = check.check.kind {
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
            guard !(change is DeleteRows || change is DropColumn || change is DropTables || change is ResetIdentity) else { return false }
            switch change.onlineForm(in: schema) {
            case .atSwitchOver, .phasesThenAtSwitchOver: return true
            default: return false
            }
        }
        guard !deferring else { return [] }
        var shadows: [ShadowTable] = []
        let sources = Set(changes.compactMap { ($0 as? DeleteRows).flatMap { $0.isLossy ? nil : $0.table } })
        for case let delete as DeleteRows in changes where !delete.isLossy {
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
        let isRemoval: (any SchemaChange) -> Bool = { $0 is DetachReferences || ($0 as? DeleteRows)?.isLossy == true }
        guard changes.contains(where: isRemoval),
              let lastRename = changes.lastIndex(where: { $0 is RenameTable || $0 is RenameColumn }) else { return changes.filter { !isCleared($0, in: changes) } }
        var tables: [String: String] = [:]
        var columns: [ColumnKey: String] = [:]
        for change in changes {
            if let rename = change as? RenameTable { tables[rename.from] = rename.to }
            if let rename = change as? RenameColumn { columns[ColumnKey(table: rename.table, column: rename.from)] = rename.to }
        }
        let table = { (name: String) in tables[name] ?? name }
        var moved: [any SchemaChange] = []
        for change in changes where isRemoval(change) && !isCleared(change, in: changes) {
            if var detach = change as? DetachReferences {
                detach.table = table(detach.table)
                detach.column = columns[ColumnKey(table: detach.table, column: detach.column)] ?? detach.column
                detach.referencedTable = table(detach.referencedTable)
                moved.append(detach)
            } else if var delete = change as? DeleteRows {
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
        guard let detach = change as? DetachReferences else { return false }
        return changes.contains { other in
            if let drop = other as? DropColumn { return drop.reason == .removed && drop.table == detach.table && drop.column == detach.column }
            if let drop = other as? DropTables { return drop.isLossy && drop.tables.contains(detach.table) }
            return false
        }
    }
}
