import SQLBuilding

/// A column made nullable: a property made optional, or one that some entities of the
/// hierarchy no longer have. Done early, before any value is cleared.
struct DropNotNull: SchemaChange {
    var kind: ChangeKind { .dropNotNull(self) }
    var table: String
    var column: String

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) DROP NOT NULL",
            lock: .accessExclusive, summary: "make \(table).\(column) nullable"
        )]
    }
}

extension DropNotNull: InstantChange {}
