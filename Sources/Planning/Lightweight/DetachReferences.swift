import SQLBuilding

/// Links from kept rows to rows of removed entities, cleared before those rows are deleted:
/// the foreign keys' ON DELETE actions (CASCADE from a delete rule) would otherwise delete kept
/// rows with them. A migration drops the removed objects, not the objects pointing at them, as
/// in Core Data, where delete rules never run during a migration. Rows whose link is required
/// are named by a `DataCheck` first, which stops the step before anything changes.
struct DetachReferences: SchemaChange {
    /// The table holding the foreign key column, and the column (source names).
    var table: String
    var column: String
    /// The table of the removed rows, and their entities (source names).
    var referencedTable: String
    var entities: [String]
    /// Why those rows go, as the summaries say it.
    var why = "removed"

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            """
            UPDATE \(ident: schema, table) SET \(ident: column) = NULL WHERE \(ident: column) IN \
            (SELECT \(ident: "_pk") FROM \(ident: schema, referencedTable) WHERE \(ident: "_entity") IN (\(literals: entities)))
            """,
            lock: .rowExclusive, summary: "clear \(table).\(column) where it links to rows of \(entities.joined(separator: ", ")) (\(why))"
        )]
    }
}
