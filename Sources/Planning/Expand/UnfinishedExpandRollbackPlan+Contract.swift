import SQLBuilding

extension UnfinishedExpandRollbackPlan {
    /// Part 2: the old version's constraints, indexes, `NOT NULL`s and defaults, over `found`
    /// (the catalog after part 1) against `expected` (the old version's contract).
    /// 1. A foreign key, check or index the old version does not have as it is: renamed back
    ///    when the old version has the same one under another name, else dropped when the new
    ///    layout or the old one names it (the run's), else left (the team's own);
    /// 2. columns: `NOT NULL` (NULLs first take the old default, when it has one) and defaults;
    /// 3. what the old version has and the store lacks: checks, indexes, then foreign keys.
    public func constraints(found: SchemaCatalog, expected: SchemaCatalog, store: String) -> [PlannedStatement] {
        var drops: [PlannedStatement] = [], renames: [PlannedStatement] = [], columns: [PlannedStatement] = [], adds: [PlannedStatement] = []
        for wanted in expected.tables {
            guard let table = found.table(named: wanted.name) else { continue }
            let on: SQL = "ALTER TABLE \(ident: store, table.name)"
            func isOurs(_ name: String) -> Bool { newNames.contains(name) || Self.isOnlineObject(name) || wanted.foreignKeys.contains { $0.name == name }
                || wanted.checks.contains { $0.name == name } || wanted.indexes.contains { $0.name == name } }
            func alter(_ sql: SQL, _ summary: String) -> PlannedStatement { PlannedStatement(sql, lock: .accessExclusive, summary: summary) }

            var keys = table.foreignKeys
            for key in table.foreignKeys where !wanted.foreignKeys.contains(key) && isOurs(key.name) {
                if let same = wanted.foreignKeys.first(where: { $0.named(key.name) == key && !keys.map(\.name).contains($0.name) }) {
                    renames.append(alter("\(on) RENAME CONSTRAINT \(ident: key.name) TO \(ident: same.name)", "rename foreign key \(key.name) -> \(same.name) on \(table.name)"))
                    keys.append(same)
                } else {
                    drops.append(alter("\(on) DROP CONSTRAINT \(ident: key.name)", "drop foreign key \(key.name) on \(table.name)"))
                }
                keys.removeAll { $0 == key }
            }
            var checks = table.checks
            for check in table.checks where !wanted.checks.contains(check) && isOurs(check.name) {
                if let same = wanted.checks.first(where: { $0.definition == check.definition && !checks.map(\.name).contains($0.name) }) {
                    renames.append(alter("\(on) RENAME CONSTRAINT \(ident: check.name) TO \(ident: same.name)", "rename check \(check.name) -> \(same.name) on \(table.name)"))
                    checks.append(same)
                } else {
                    drops.append(alter("\(on) DROP CONSTRAINT \(ident: check.name)", "drop check \(check.name) on \(table.name)"))
                }
                checks.removeAll { $0 == check }
            }
            var indexes = table.indexes
            for index in table.indexes where !wanted.indexes.contains(index) && isOurs(index.name) {
                if let same = wanted.indexes.first(where: { $0.isUnique == index.isUnique && $0.definition == index.definition && !indexes.map(\.name).contains($0.name) }) {
                    renames.append(PlannedStatement("ALTER INDEX \(ident: store, index.name) RENAME TO \(ident: same.name)", lock: .shareUpdateExclusive, summary: "rename index \(index.name) -> \(same.name)"))
                    indexes.append(same)
                } else {
                    drops.append(PlannedStatement("DROP INDEX \(ident: store, index.name)", lock: .accessExclusive, summary: "drop index \(index.name) on \(table.name)"))
                }
                indexes.removeAll { $0 == index }
            }

            for column in wanted.columns {
                guard let now = table.columns.first(where: { $0.name == column.name }) else { continue }
                let name: SQL = "\(ident: column.name)"
                if now.defaultExpression != column.defaultExpression {
                    columns.append(alter(
                        column.defaultExpression.map { "\(on) ALTER COLUMN \(name) SET DEFAULT \(unsafeRaw: $0)" } ?? "\(on) ALTER COLUMN \(name) DROP DEFAULT",
                        "default of \(table.name).\(column.name) as '\(to)' has it"
                    ))
                }
                if now.isNullable && !column.isNullable {
                    if let value = column.defaultExpression {
                        columns.append(PlannedStatement(
                            "UPDATE \(ident: store, table.name) SET \(name) = \(unsafeRaw: value) WHERE \(name) IS NULL", lock: .rowExclusive,
                            summary: "give the NULLs of \(table.name).\(column.name) its default"
                        ))
                    }
                    columns.append(alter("\(on) ALTER COLUMN \(name) SET NOT NULL", "\(table.name).\(column.name) required again"))
                } else if !now.isNullable && column.isNullable {
                    columns.append(alter("\(on) ALTER COLUMN \(name) DROP NOT NULL", "\(table.name).\(column.name) optional again"))
                }
            }

            for check in wanted.checks where !checks.contains(check) {
                adds.append(alter("\(on) ADD CONSTRAINT \(ident: check.name) \(unsafeRaw: check.definition)", "check \(check.name) on \(table.name)"))
            }
            for index in wanted.indexes where !indexes.contains(index) {
                adds.append(PlannedStatement(
                    "CREATE \(unsafeRaw: index.isUnique ? "UNIQUE " : "")INDEX \(ident: index.name) ON \(ident: store, table.name) USING \(unsafeRaw: index.definition)",
                    lock: .share, summary: "index \(index.name) on \(table.name)"
                ))
            }
            for key in wanted.foreignKeys where !keys.contains(key) {
                var sql: SQL = """
                    \(on) ADD CONSTRAINT \(ident: key.name) FOREIGN KEY (\(idents: key.columns)) \
                    REFERENCES \(ident: store, key.referencedTable) (\(idents: key.referencedColumns)) \
                    ON DELETE \(unsafeRaw: key.onDelete.uppercased()) ON UPDATE \(unsafeRaw: key.onUpdate.uppercased())
                    """
                if key.isDeferrable { sql.append(" DEFERRABLE") }
                adds.append(PlannedStatement(sql, lock: .shareRowExclusive, summary: "foreign key \(key.name) on \(table.name)"))
            }
        }
        return drops + renames + columns + adds
    }

    /// A change the rollback cannot undo once it ran (it loses data the old version holds, or
    /// replaces a column or table), unless it waits for the switch-over: why, with its code.
    static func notUndoable(_ change: any SchemaChange, store: String) -> String? {
        if case .atSwitchOver = change.onlineForm(in: store) { return nil }
        let what = change.statements(in: store).first?.summary ?? "a change"
        switch change.kind {
        case .addCheck, .addColumn, .addForeignKey, .addTable, .backfillNulls, .changeColumnDefault, .createIndex, .dataCheck, .dropConstraint,
             .dropIndex, .dropNotNull, .fillJoinTable, .fillOrderColumn, .fillToOneColumn, .renameColumn, .renameConstraint, .renameTable,
             .resetIdentity, .setNotNull, .shortestFloatText, .updateEntityNames, .atSwitchOver:
            return nil
        case .addUnique, .alterColumnType, .clearValues, .copyColumnValues, .copyRows, .deleteRows, .detachReferences, .dropColumn, .dropTables,
             .dropUnique, .foreignKeyBeside, .shadowTable, .rebuildBesideOthers, .jointSwap, .builtOnRebuilt:
            return "[rollbackUnfinishedNotUndoable] the step's '\(what)' runs before its switch-over and cannot be undone"
        }
    }
}

extension SchemaCatalog.ForeignKey {
    /// The same key under `name`.
    func named(_ name: String) -> SchemaCatalog.ForeignKey {
        var key = self
        key.name = name
        return key
    }
}
