import SQLBuilding

/// The links of a join table to rows moving out of a table rebuilt beside itself, under
/// `apply --online`. Offline, the delete of the moved rows takes them (a join table's keys
/// cascade: a link goes, not a row of an entity; `plan` names the links lost), so they are
/// deleted before the switch-over:
/// 1. a `BEFORE INSERT OR UPDATE` trigger skips a link the application writes meanwhile to a
///    moved row (an update deletes the link it updates): it ends as the offline delete would
///    end it, and the key beside, which points at the shadow, never sees it;
/// 2. batches delete the links already there, over ranges of the moved rows' table's keys (a
///    join table has no `_pk`: the column's values are walked).
struct DeleteMovedLinks {
    /// The join table, its column pointing at the moved rows, and its primary key's columns.
    var table: String
    var column: String
    var rowKey: [String]
    /// The table the rows move out of, and their entities.
    var referencedTable: String
    var entities: [String]

    func phases(in schema: String) -> [OnlinePhase] {
        let trigger = OnlineTrigger.named("unlink", table: table, column: column)
        let updated = SQL.joined(rowKey.map { "\(ident: $0) = OLD.\(ident: $0)" }, separator: " AND ")
        let body: SQL = """
            BEGIN
                IF \(OnlineTrigger.linkWritten(column, to: referencedTable, entities: entities, in: schema)) THEN
                    IF TG_OP = 'UPDATE' THEN
                        DELETE FROM \(ident: schema, table) WHERE \(updated);
                    END IF;
                    RETURN NULL;
                END IF;
                RETURN NEW;
            END
            """
        let delete: SQL = """
            DELETE FROM \(ident: schema, table) WHERE \(ident: column) IN \
            (SELECT \(ident: "_pk") FROM \(ident: schema, referencedTable) WHERE \(ident: "_entity") IN (\(literals: entities)))
            """
        return OnlinePhase.triggeredBatches(
            trigger, in: schema, timing: "BEFORE INSERT OR UPDATE", body: body,
            does: "links written to rows of \(entities.joined(separator: ", ")) (moved out of \(referencedTable)) are skipped",
            batches: BatchedStatement(schema: schema, table: referencedTable, prefix: delete, key: "\(ident: column)"),
            summary: "delete the links of \(table).\(column) to rows of \(entities.joined(separator: ", ")) (moved out of \(referencedTable)), in batches"
        )
    }
}
