import SQLBuilding

/// Tables whose contents leave the store: removed entities, removed many-to-many relationships,
/// or join tables whose links were copied elsewhere (`isLossy` false). One statement, so tables
/// referring to each other go together.
struct DropTables: SchemaChange {
    var kind: ChangeKind { .dropTables(self) }
    var tables: [String]
    var isLossy: Bool

    func statements(in schema: String) -> [PlannedStatement] {
        let names = SQL.joined(tables.map { "\(ident: schema, $0)" }, separator: ", ")
        let why = isLossy ? "removed from the model" : "contents moved"
        return [PlannedStatement("DROP TABLE \(names)", lock: .accessExclusive, summary: "drop table \(tables.joined(separator: ", ")) (\(why))")]
    }
}

extension DropTables: OnlineChange {
    func onlineForm(in schema: String) -> OnlineForm {
        isLossy ? .phases([.instant(statements(in: schema))]) : .atSwitchOver(statements(in: schema))
    }
}
