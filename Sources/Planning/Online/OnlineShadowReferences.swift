import SQLBuilding

/// The foreign keys of the destination that point at a table an entity leaves, under
/// `apply --online`, taken over by its shadow (`ShadowTable`) so that the switch-over still
/// only renames and drops:
/// 1. the links to moved rows are cleared as the offline step clears them before it deletes
///    those rows (`MovedLinks`), whatever the key's delete rule, before the switch-over: a
///    `BEFORE INSERT OR UPDATE` trigger clears a link written to a moved row, batches clear
///    the links already there (`DetachReferences`' online form);
/// 2. once the shadow holds every row that stays and no link points at a moved row, a key on
///    the same column pointing at the shadow is added `NOT VALID` under a temporary name and
///    validated; both keys act meanwhile (a row deleted from the old table leaves the shadow
///    through the mirroring trigger: each key acts on the links to it, the old one first);
/// 3. the switch-over drops the old key and gives the new one its name, before the old table
///    is dropped (nothing depends on it any more).
/// The table's own key (an animal's mother) clears the links of the rows that stay; its key
/// on the shadow points at the shadow, added once the shadow holds them all (`NOT VALID`, then
/// validated, under its final name: the old table's goes with it).
extension ShadowTable {
    /// Whether the shadow can take over `key` of `table`: a key the step keeps (not one it
    /// adds, nor one of a table it creates or rebuilds too) from a hierarchy table (the shadowed
    /// table's own among them), on a column whose links to removed rows the step does not clear
    /// too (one trigger per column) and that no row must fill (a required link written
    /// meanwhile must stop the step in the switch-over, naming the rows: the moved rows' delete
    /// stays there); or from a join table whose links no change of the step reads (a trigger
    /// skipping a link to a moved row would hide it from a copy of the moved entity's links).
    static func takesOver(_ key: ForeignKey, of table: TableLayout, shadowing: Set<String>, in changes: [any SchemaChange]) -> Bool {
        let isOwn = key.referencedTable == table.name
        guard isOwn || !shadowing.contains(table.name) else { return false }
        if table.kind.isHierarchy {
            guard DeleteRows.requiredEntities(of: key.column, in: table) == nil else { return false }
        }
        return !changes.contains { keeps(key, of: table, from: $0) }
    }

    /// Whether `change` keeps the shadow from taking over `key` of `table`, decided for every
    /// kind (no default).
    private static func keeps(_ key: ForeignKey, of table: TableLayout, from change: any SchemaChange) -> Bool {
        switch change.kind {
        case .fillJoinTable(let fill): !table.kind.isHierarchy && fill.links.table == table.name
        case .addTable(let add): add.table.name == table.name
        case .addForeignKey(let add): add.table == table.name && add.foreignKey.column == key.column
        case .detachReferences(let detach): detach.table == table.name || detach.column == key.column
        case .addCheck, .addColumn, .addUnique, .alterColumnType, .backfillNulls, .changeColumnDefault, .clearValues,
             .copyColumnValues, .copyRows, .createIndex, .dataCheck, .deleteRows, .dropColumn, .dropConstraint, .dropIndex,
             .dropNotNull, .dropTables, .dropUnique, .fillOrderColumn, .fillToOneColumn, .renameColumn, .renameConstraint,
             .renameTable, .resetIdentity, .setNotNull, .shortestFloatText, .updateEntityNames:
            false
        case .atSwitchOver, .foreignKeyBeside, .shadowTable, .rebuildBesideOthers, .jointSwap, .builtOnRebuilt:
            false
        }
    }

    /// The key on `key`'s column that points at the shadow until the switch-over.
    func temporaryKeyName(_ table: String, _ key: ForeignKey) -> String {
        OnlineTrigger.prefix + "shadowfk_" + OnlineTrigger.digest(table + "." + key.column)
    }

    /// After the shadow's copy: 1. the links to moved rows cleared (a join table's deleted,
    /// as offline the delete of the moved rows deletes them); 2. the keys beside.
    func referencingPhases(in schema: String) -> [OnlinePhase] {
        var phases: [OnlinePhase] = []
        for (referencing, key) in referencing {
            let isOwn = referencing.name == table.name
            if referencing.kind.isHierarchy {
                let detach = DetachReferences(
                    table: referencing.name, column: key.column, referencedTable: table.name, entities: moved, why: "moved out of \(table.name)",
                    keeping: isOwn ? moved : [], key: key
                )
                guard case .phases(let clearing) = detach.onlineForm(in: schema) else { preconditionFailure("links are cleared in phases") }
                phases += clearing
            } else {
                phases += DeleteMovedLinks(table: referencing.name, column: key.column, rowKey: referencing.primaryKey, referencedTable: table.name, entities: moved)
                    .phases(in: schema)
            }
            var beside = key
            if !isOwn { beside.name = temporaryKeyName(referencing.name, key) }
            beside.referencedTable = shadow
            guard case .phases(let adding) = AddForeignKey(table: isOwn ? shadow : referencing.name, foreignKey: beside, scansRows: true).onlineForm(in: schema) else {
                preconditionFailure("a foreign key is added in phases")
            }
            phases += adding
        }
        return phases
    }

    /// 3. Before the old table is dropped.
    func referencingSwitchOver(in schema: String) -> [PlannedStatement] {
        referencing.filter { $0.table.name != table.name }.map { ($0.table.name, $0.key) }.flatMap { referencing, key in
            [
                PlannedStatement(
                    "ALTER TABLE \(ident: schema, referencing) DROP CONSTRAINT \(ident: key.name)", lock: .accessExclusive,
                    summary: "drop constraint \(key.name) on \(referencing) (it points at the old \(table.name))"
                ),
                PlannedStatement(
                    "ALTER TABLE \(ident: schema, referencing) RENAME CONSTRAINT \(ident: temporaryKeyName(referencing, key)) TO \(ident: key.name)",
                    lock: .accessExclusive, summary: "foreign key \(referencing).\(key.column) -> \(table.name) takes the name \(key.name)"
                ),
            ]
        }
    }
}
