import SQLBuilding

/// A CHECK constraint: the `_entity` check listing the hierarchy's concrete entities, or a
/// sub-entity's required property. Dropped when it changes; added (reading every row) at the end.
struct DropConstraint: SchemaChange {
    var kind: ChangeKind { .dropConstraint(self) }
    var table: String
    var name: String
    /// A foreign key whose column the destination does not have: dropping the column (or its
    /// table) drops it too, which `apply --online` leaves to that drop.
    var goesWithItsColumn = false
    /// A foreign key whose column continues (its referenced table or delete rule changes): the
    /// column in the destination, where a new key replaces it. `apply --online` pairs the two
    /// when the new key points at rows moved to another table.
    var continuingColumn: LightweightDiff.ColumnKey?

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "ALTER TABLE \(ident: schema, table) DROP CONSTRAINT \(ident: name)",
            lock: .accessExclusive, summary: "drop constraint \(name) on \(table)"
        )]
    }
}

extension DropConstraint: OnlineChange {
    /// A foreign key of a column on its way out keeps its delete rule working for the rows
    /// written meanwhile; the column's drop takes it along.
    func onlineForm(in schema: String) -> OnlineForm {
        goesWithItsColumn ? .phases([]) : .phases([.instant(statements(in: schema))])
    }
}
