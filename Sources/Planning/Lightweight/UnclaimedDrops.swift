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
