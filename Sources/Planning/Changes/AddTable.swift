import SQLBuilding

/// A table the source store lacks: a new entity hierarchy, a new join table, or the table of an
/// entity moved out of its hierarchy. Created bare (columns, primary key, checks) as `CREATE`
/// does; its foreign keys, unique constraints and indexes come at the end of the step.
struct AddTable: SchemaChange {
    var kind: ChangeKind { .addTable(self) }
    var table: TableLayout

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            CreateStore.createTable(table, schema: schema), lock: .accessExclusive,
            summary: "create table \(table.name)\(CreateStore.describe(table.kind))"
        )]
    }
}

extension AddTable: InstantChange {}
