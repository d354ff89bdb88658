import SQLBuilding

/// Which changes of a lightweight step `apply --expand` defers to `complete`: the drops that
/// lose data (removed attributes and relationships, tables whose contents leave the store).
/// The old version's writers keep working without them, and `complete` runs them once no old
/// release is left. A drop stays in the step when a new name takes the dropped one's place, or
/// when its table is rebuilt anyway (`OnlinePlan.rebuiltTables`).
///
/// A column kept until `complete` must not stop the new release's writes, which never fill it:
/// its NOT NULL, its required CHECK and its foreign key go first (`relaxing`).
struct ExpandDeferral {
    var kept: [any SchemaChange] = []
    var deferred: [any SchemaChange] = []
    var relaxing: [any SchemaChange] = []

    /// The deferral of the step `pairing` infers, over the tables its online plan rebuilds.
    init(pairing: LayoutPairing, store: String) {
        let changes = LightweightDiff(pairing: pairing).orderedChanges
        self.init(changes: changes, pairing: pairing, rebuilt: Set(OnlinePlanner.plan(changes, schema: store).rebuiltTables))
    }

    init(changes: [any SchemaChange], pairing: LayoutPairing, rebuilt: Set<String>) {
        let destinationTables = Set(pairing.destinationLayout.tables.map(\.name))
        // Constraints the step drops itself (online, a key that goes with its column is not).
        let dropped = Set(changes.compactMap { change -> String? in
            guard case .dropConstraint(let drop) = change.kind, !drop.goesWithItsColumn else { return nil }
            return "\(drop.table).\(drop.name)"
        })
        let keptTables = Set(changes.flatMap { change -> [String] in
            guard case .dropTables(let drop) = change.kind, drop.isLossy, destinationTables.isDisjoint(with: drop.tables) else { return [] }
            return drop.tables
        })
        for change in changes {
            if case .dropColumn(let drop) = change.kind, drop.reason == .removed {
                let table = pairing.currentName(ofSourceTable: drop.table)
                let taken = pairing.destinationLayout.table(named: table)?.columns.contains { $0.name == drop.column } ?? false
                if !taken && !rebuilt.contains(table) && !rebuilt.contains(drop.table) {
                    deferred.append(DropColumn(table: table, column: drop.column, reason: .removed))
                    relax(drop, source: pairing.sourceLayout, alreadyDropped: dropped, keptTables: keptTables)
                    continue
                }
            }
            if case .dropTables(let drop) = change.kind, drop.isLossy, destinationTables.isDisjoint(with: drop.tables) {
                deferred.append(drop)
                continue
            }
            kept.append(change)
        }
    }

    /// The removed columns left in their tables until `complete`, as `"table.column"`.
    var keptColumns: Set<String> {
        Set(deferred.compactMap { change in
            guard case .dropColumn(let drop) = change.kind else { return nil }
            return "\(drop.table).\(drop.column)"
        })
    }

    /// The keys of kept columns left in place (they link to a kept table), as `"table.key"`
    /// under the source table's name: a rollback does not add them again.
    var keptKeys: Set<String> = []

    /// The dropped tables left in the store until `complete` (removed entities' hierarchies,
    /// removed many-to-many join tables): the old version's views read and write them as they are.
    var keptTables: Set<String> {
        Set(deferred.flatMap { change -> [String] in
            guard case .dropTables(let drop) = change.kind else { return [] }
            return drop.tables
        })
    }

    /// The column's constraints a writer that never fills it would violate, dropped now (under
    /// the source table's name: this runs first). A key to a table kept until `complete` (a
    /// removed entity's) stays: the new version never deletes its rows, and the old version's
    /// links keep their delete rule.
    private mutating func relax(_ drop: DropColumn, source: StoreLayout, alreadyDropped: Set<String>, keptTables: Set<String>) {
        guard let table = source.table(named: drop.table), let column = table.columns.first(where: { $0.name == drop.column }) else { return }
        if !column.isNullable { relaxing.append(DropNotNull(table: table.name, column: column.name)) }
        for check in table.checks {
            guard case .requiredFor(let checked, _) = check.kind, checked == column.name else { continue }
            if !alreadyDropped.contains("\(table.name).\(check.name)") { relaxing.append(DropConstraint(table: table.name, name: check.name)) }
        }
        for key in table.foreignKeys where key.column == column.name && !alreadyDropped.contains("\(table.name).\(key.name)") {
            if keptTables.contains(key.referencedTable) {
                keptKeys.insert("\(table.name).\(key.name)")
                continue
            }
            relaxing.append(DropConstraint(table: table.name, name: key.name))
        }
    }
}
