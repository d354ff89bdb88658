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
extension ShadowTable {
    /// Whether the shadow can take over `key` of `table`: a key the step keeps (not one it
    /// adds, nor one of a table it creates or rebuilds too) from another hierarchy table, on a
    /// column whose links to removed rows the step does not clear too (one trigger per column)
    /// and that no row must fill (a required link written meanwhile must stop the step in the
    /// switch-over, naming the rows: the moved rows' delete stays there).
    static func takesOver(_ key: ForeignKey, of table: TableLayout, shadowing: Set<String>, in changes: [any SchemaChange]) -> Bool {
        guard table.kind.isHierarchy, DeleteRows.requiredEntities(of: key.column, in: table) == nil,
              !shadowing.contains(table.name), key.referencedTable != table.name else { return false }
        return !changes.contains { change in
            if let add = change as? AddTable { return add.table.name == table.name }
            if let add = change as? AddForeignKey { return add.table == table.name && add.foreignKey.column == key.column }
            if let detach = change as? DetachReferences { return detach.table == table.name || detach.column == key.column }
            return false
        }
    }

    /// The key on `key`'s column that points at the shadow until the switch-over.
    func temporaryKeyName(_ table: String, _ key: ForeignKey) -> String {
        OnlineTrigger.prefix + "shadowfk_" + OnlineTrigger.digest(table + "." + key.column)
    }

    /// After the shadow's copy: 1. the links to moved rows cleared; 2. the keys beside.
    func referencingPhases(in schema: String) -> [OnlinePhase] {
        var phases: [OnlinePhase] = []
        for (referencing, key) in referencing {
            let detach = DetachReferences(table: referencing, column: key.column, referencedTable: table.name, entities: moved, why: "moved out of \(table.name)")
            guard case .phases(let clearing) = detach.onlineForm(in: schema) else { preconditionFailure("links are cleared in phases") }
            phases += clearing
            var beside = key
            beside.name = temporaryKeyName(referencing, key)
            beside.referencedTable = shadow
            guard case .phases(let adding) = AddForeignKey(table: referencing, foreignKey: beside, scansRows: true).onlineForm(in: schema) else {
                preconditionFailure("a foreign key is added in phases")
            }
            phases += adding
        }
        return phases
    }

    /// 3. Before the old table is dropped.
    func referencingSwitchOver(in schema: String) -> [PlannedStatement] {
        referencing.flatMap { referencing, key in
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
