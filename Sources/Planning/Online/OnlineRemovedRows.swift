import SQLBuilding

// Rows of removed entities, under `apply --online`: the links to them are cleared, then they
// are deleted, each in batches under a trigger that gives the application's writes meanwhile
// the result the offline step would give them. `OnlineArrangement` runs both after the renames
// of tables and columns, so the triggers name them as they stay. `--allow-data-loss` is asked
// for as offline: the step's hazards are the same.

extension DetachReferences: OnlineChange {
    /// 1. A `BEFORE INSERT OR UPDATE` trigger clears a link written to a row of a removed
    ///    (or moved) entity; 2. batches clear the links already there.
    func onlineForm(in schema: String) -> OnlineForm {
        // Links to moved rows and to removed rows of one column each get their trigger.
        let trigger = OnlineTrigger.named(why == "removed" ? "detach" : "unlink", table: table, column: column)
        var condition = OnlineTrigger.linkWritten(column, to: referencedTable, entities: entities, in: schema)
        if !keeping.isEmpty { condition.append(" AND NEW.\(ident: "_entity") NOT IN (\(literals: keeping))") }
        let body: SQL = """
            BEGIN
                IF \(condition) THEN
                    NEW.\(ident: column) := NULL;
                END IF;
                RETURN NEW;
            END
            """
        let clear = statements(in: schema)[0]
        return .phases(OnlinePhase.triggeredBatches(
            trigger, in: schema, timing: "BEFORE INSERT OR UPDATE", body: body,
            does: "links written to rows of \(entities.joined(separator: ", ")) (\(why)) are cleared",
            batches: BatchedStatement(schema: schema, table: table, prefix: clear.sql), summary: clear.summary + ", in batches"
        ))
    }
}

extension DeleteRows {
    /// 1. A `BEFORE INSERT OR UPDATE OF _entity` trigger skips rows of the removed entities
    ///    written meanwhile (the step would delete them: the write's effect is the step's), so
    ///    none arrives behind the batches; other updates of those rows go through (a foreign
    ///    key's action among them), the batches delete the rows anyway; 2. batches delete the
    ///    rows already there.
    func removedRowsForm(in schema: String) -> OnlineForm {
        let trigger = OnlineTrigger.named("removed", table: table, column: "_entity")
        let body: SQL = "BEGIN IF NEW.\(ident: "_entity") IN (\(literals: entities)) THEN RETURN NULL; END IF; RETURN NEW; END"
        let delete = deletion(in: schema)
        return .phases(OnlinePhase.triggeredBatches(
            trigger, in: schema, timing: "BEFORE INSERT OR UPDATE OF _entity", body: body,
            does: "rows of \(entities.joined(separator: ", ")) (removed) written are skipped",
            batches: BatchedStatement(schema: schema, table: table, prefix: delete.sql), summary: delete.summary + ", in batches"
        ))
    }
}

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
