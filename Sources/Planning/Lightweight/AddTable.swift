import SQLBuilding

/// A table the source store lacks: a new entity hierarchy, a new join table, or the table of an
/// entity moved out of its hierarchy. Created bare (columns, primary key, checks) as `CREATE`
/// does; its foreign keys, unique constraints and indexes come at the end of the step.
struct AddTable: SchemaChange {
    var table: TableLayout

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            CreateStore.createTable(table, schema: schema), lock: .accessExclusive,
            summary: "create table \(table.name)\(CreateStore.describe(table.kind))"
        )]
    }
}

/// Tables whose contents leave the store: removed entities, removed many-to-many relationships,
/// or join tables whose links were copied elsewhere (`isLossy` false). One statement, so tables
/// referring to each other go together.
struct DropTables: SchemaChange {
    var tables: [String]
    var isLossy: Bool

    func statements(in schema: String) -> [PlannedStatement] {
        let names = SQL.joined(tables.map { "\(ident: schema, $0)" }, separator: ", ")
        let why = isLossy ? "removed from the model" : "contents moved"
        return [PlannedStatement("DROP TABLE \(names)", lock: .accessExclusive, summary: "drop table \(tables.joined(separator: ", ")) (\(why))")]
    }
}
