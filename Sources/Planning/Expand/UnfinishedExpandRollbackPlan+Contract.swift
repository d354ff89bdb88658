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

            let keys = Self.reconciled(table.foreignKeys, wanted.foreignKeys, isOurs: isOurs, renames: &renames, drops: &drops) { key, same in
                alter("\(on) RENAME CONSTRAINT \(ident: key.name) TO \(ident: same.name)", "rename foreign key \(key.name) -> \(same.name) on \(table.name)")
            } drop: { alter("\(on) DROP CONSTRAINT \(ident: $0.name)", "drop foreign key \($0.name) on \(table.name)") }
            let checks = Self.reconciled(table.checks, wanted.checks, isOurs: isOurs, renames: &renames, drops: &drops) { check, same in
                alter("\(on) RENAME CONSTRAINT \(ident: check.name) TO \(ident: same.name)", "rename check \(check.name) -> \(same.name) on \(table.name)")
            } drop: { alter("\(on) DROP CONSTRAINT \(ident: $0.name)", "drop check \($0.name) on \(table.name)") }
            let indexes = Self.reconciled(table.indexes, wanted.indexes, isOurs: isOurs, renames: &renames, drops: &drops) { index, same in
                PlannedStatement("ALTER INDEX \(ident: store, index.name) RENAME TO \(ident: same.name)", lock: .shareUpdateExclusive, summary: "rename index \(index.name) -> \(same.name)")
            } drop: { PlannedStatement("DROP INDEX \(ident: store, $0.name)", lock: .accessExclusive, summary: "drop index \($0.name) on \(table.name)") }

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

    /// A table's foreign keys, checks or indexes (`found`) made as `wanted` has them, for those
    /// `isOurs` names: one the old version has under another name is renamed to it, any other
    /// dropped. Returns what the table then has.
    static func reconciled<Object: CatalogObject>(
        _ found: [Object], _ wanted: [Object], isOurs: (String) -> Bool, renames: inout [PlannedStatement], drops: inout [PlannedStatement],
        rename: (Object, Object) -> PlannedStatement, drop: (Object) -> PlannedStatement
    ) -> [Object] {
        var kept = found
        for object in found where !wanted.contains(object) && isOurs(object.name) {
            let same = wanted.first { candidate in
                var twin = candidate
                twin.name = object.name
                return twin == object && !kept.contains { $0.name == candidate.name }
            }
            if let same {
                renames.append(rename(object, same))
                kept.append(same)
            } else {
                drops.append(drop(object))
            }
            kept.removeAll { $0 == object }
        }
        return kept
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

/// A named object of a table in the catalog, compared whole.
protocol CatalogObject: Hashable {
    var name: String { get set }
}

extension SchemaCatalog.ForeignKey: CatalogObject {}
extension SchemaCatalog.Check: CatalogObject {}
extension SchemaCatalog.Index: CatalogObject {}
