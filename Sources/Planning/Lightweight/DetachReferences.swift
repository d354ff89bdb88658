import SQLBuilding

/// Links from kept rows to rows that leave their table, cleared before those rows are deleted:
/// rows of removed entities, or rows of an entity moved out of the hierarchy (`MovedLinks`).
/// The foreign keys' ON DELETE actions (CASCADE from a delete rule) would otherwise delete kept
/// rows with them, or deny the delete. A migration drops the removed objects, not the objects
/// pointing at them, as in Core Data, where delete rules never run during a migration. Rows
/// whose link is required are named by a `DataCheck` first, which stops the step before
/// anything changes.
struct DetachReferences: SchemaChange {
    /// The table holding the foreign key column, and the column (source names).
    var table: String
    var column: String
    /// The table of the removed rows, and their entities (source names).
    var referencedTable: String
    var entities: [String]
    /// Why those rows go, as the summaries say it.
    var why = "removed"
    /// Rows of these entities keep their link: the rows that leave themselves (a table's own
    /// key), or those whose link is required (named by a `DataCheck` instead).
    var keeping: [String] = []

    func statements(in schema: String) -> [PlannedStatement] {
        var clear: SQL = """
            UPDATE \(ident: schema, table) SET \(ident: column) = NULL WHERE \(ident: column) IN \
            (SELECT \(ident: "_pk") FROM \(ident: schema, referencedTable) WHERE \(ident: "_entity") IN (\(literals: entities)))
            """
        if !keeping.isEmpty { clear.append(" AND \(ident: "_entity") NOT IN (\(literals: keeping))") }
        return [PlannedStatement(clear, lock: .rowExclusive, summary: "clear \(table).\(column) where it links to rows of \(entities.joined(separator: ", ")) (\(why))")]
    }
}
