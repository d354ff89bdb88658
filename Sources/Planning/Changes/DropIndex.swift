import SQLBuilding

struct DropIndex: SchemaChange {
    var kind: ChangeKind { .dropIndex(self) }
    var table: String
    var name: String
    /// An index over a column the destination does not have: dropping the column drops it too,
    /// which `apply --online` leaves to that drop (a moved column is read until the switch-over).
    var goesWithItsColumn = false

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement("DROP INDEX \(ident: schema, name)", lock: .accessExclusive, summary: "drop index \(name) on \(table)")]
    }
}

extension DropIndex: OnlineChange {
    /// An index over a column on its way out serves the column's foreign key (its delete rule
    /// looks rows up by it) until the column's drop takes it along.
    func onlineForm(in schema: String) -> OnlineForm {
        goesWithItsColumn ? .phases([]) : .phases([.instant(statements(in: schema))])
    }
}
