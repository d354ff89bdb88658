import SQLBuilding

// Rows of removed entities, under `apply --online`: the links to them are cleared, then they
// are deleted, each in batches under a trigger that gives the application's writes meanwhile
// the result the offline step would give them. `OnlineArrangement` runs both after the renames
// of tables and columns, so the triggers name them as they stay. `--allow-data-loss` is asked
// for as offline: the step's hazards are the same.

extension OnlineTrigger {
    /// A row trigger's condition: the row written links `column` anew to a row of `entities`
    /// in `table`.
    static func linkWritten(_ column: String, to table: String, entities: [String], in schema: String) -> SQL {
        let linked: SQL = "SELECT 1 FROM \(ident: schema, table) WHERE \(ident: "_pk") = NEW.\(ident: column) AND \(ident: "_entity") IN (\(literals: entities))"
        return """
            NEW.\(ident: column) IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.\(ident: column) IS DISTINCT FROM OLD.\(ident: column))
                   AND EXISTS (\(linked))
            """
    }
}
