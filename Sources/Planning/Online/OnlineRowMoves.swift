import SQLBuilding

// An entity moved between tables, under `apply --online`: its rows stay in the old table,
// where the application keeps writing them, until the switch-over.
// 1. A trigger on the old table mirrors every insert, update and delete of those rows into
//    the new table (an upsert by `_pk`, so a row the batches already copied takes the write);
// 2. batches copy the rows already there, `FOR SHARE ON CONFLICT DO NOTHING` (a row updated
//    meanwhile is copied as committed, and a row the trigger wrote is left to it);
// 3. the switch-over drops the trigger, deletes the moved rows from the old table and
//    continues the new table's identity after its largest `_pk` (`OnlineArrangement` puts the
//    foreign keys and the `_entity` check that depend on those rows around it).

/// Statements that run in the switch-over, in the step's order: what `OnlineArrangement`
/// moves there from where the offline step runs it.
struct AtSwitchOver: OnlineChange {
    var kind: ChangeKind { .atSwitchOver(self) }
    var deferred: [PlannedStatement]

    func statements(in schema: String) -> [PlannedStatement] { deferred }

    func onlineForm(in schema: String) -> OnlineForm { .atSwitchOver(deferred) }
}

/// A foreign key that points at moved rows in their new table, built while the key it
/// replaces (on the same column, pointing at the old table) keeps acting: `NOT VALID` under a
/// temporary name, validated; the switch-over drops the old key and renames the new one.
struct ForeignKeyBeside: OnlineChange {
    var kind: ChangeKind { .foreignKeyBeside(self) }
    var key: AddForeignKey
    /// The key it replaces.
    var replaced: String

    var temporaryName: String { OnlineTrigger.prefix + "fk_" + OnlineTrigger.digest(key.table + "." + key.foreignKey.column) }

    func statements(in schema: String) -> [PlannedStatement] { key.statements(in: schema) }

    func onlineForm(in schema: String) -> OnlineForm {
        var beside = key
        beside.foreignKey.name = temporaryName
        return beside.onlineForm(in: schema)
    }

    /// Before the moved rows are deleted from the old table, so the old key's delete rule
    /// does not act on the rows that link to them.
    func switchOver(in schema: String) -> [PlannedStatement] {
        let table = key.table
        return [
            PlannedStatement("ALTER TABLE \(ident: schema, table) DROP CONSTRAINT \(ident: replaced)", lock: .accessExclusive, summary: "drop constraint \(replaced) on \(table) (its rows moved)"),
            PlannedStatement(
                "ALTER TABLE \(ident: schema, table) RENAME CONSTRAINT \(ident: temporaryName) TO \(ident: key.foreignKey.name)",
                lock: .accessExclusive, summary: "foreign key \(table).\(key.foreignKey.column) -> \(key.foreignKey.referencedTable) takes the name \(key.foreignKey.name)"
            ),
        ]
    }
}
