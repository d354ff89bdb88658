import SQLBuilding

/// Links from kept rows to rows that leave their table, cleared before those rows are deleted:
/// rows of removed entities, or rows of an entity moved out of the hierarchy (`MovedLinks`).
/// The foreign keys' ON DELETE actions (CASCADE from a delete rule) would otherwise delete kept
/// rows with them, or deny the delete. A migration drops the removed objects, not the objects
/// pointing at them, as in Core Data, where delete rules never run during a migration. Rows
/// whose link is required are named by a `DataCheck` first, which stops the step before
/// anything changes.
struct DetachReferences: SchemaChange {
    var kind: ChangeKind { .detachReferences(self) }

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
    /// The foreign key of the link: `apply --online` keeps its delete rule on the links it
    /// clears early (`ClearedLinks`).
    var key: ForeignKey?

    func statements(in schema: String) -> [PlannedStatement] {
        var clear: SQL = """
            UPDATE \(ident: schema, table) SET \(ident: column) = NULL WHERE \(ident: column) IN \
            (SELECT \(ident: "_pk") FROM \(ident: schema, referencedTable) WHERE \(ident: "_entity") IN (\(literals: entities)))
            """
        if !keeping.isEmpty { clear.append(" AND \(ident: "_entity") NOT IN (\(literals: keeping))") }
        return [PlannedStatement(clear, lock: .rowExclusive, summary: "clear \(table).\(column) where it links to rows of \(entities.joined(separator: ", ")) (\(why))")]
    }
}

extension DetachReferences: OnlineChange {
    /// 1. A `BEFORE INSERT OR UPDATE` trigger clears a link written to a row of a removed
    ///    (or moved) entity; 2. batches clear the links already there. A CASCADE or denying
    ///    key keeps acting on the links cleared until the switch-over (`ClearedLinks`).
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
        if let cleared = ClearedLinks(self) { return .phases(cleared.phases(clearing: trigger, in: schema, clear: clear)) }
        return .phases(OnlinePhase.triggeredBatches(
            trigger, in: schema, timing: "BEFORE INSERT OR UPDATE", body: body,
            does: "links written to rows of \(entities.joined(separator: ", ")) (\(why)) are cleared",
            batches: BatchedStatement(schema: schema, table: table, prefix: clear.sql), summary: clear.summary + ", in batches"
        ))
    }
}
