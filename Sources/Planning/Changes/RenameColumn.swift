import SQLBuilding

/// A column continued under another name: a renamed attribute or to-one relationship, the owner
/// column of a join table whose entity was renamed, an order column named after a renamed inverse.
struct RenameColumn: SchemaChange {
    var kind: ChangeKind { .renameColumn(self) }

    /// The table's name at that point of the step (after table renames).
    var table: String
    var from: String
    var to: String

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "ALTER TABLE \(ident: schema, table) RENAME COLUMN \(ident: from) TO \(ident: to)",
            lock: .accessExclusive, summary: "rename column \(table).\(from) -> \(to)"
        )]
    }
}

extension RenameColumn: InstantChange {}
