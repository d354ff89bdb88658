import SQLBuilding

/// The rows of another table that link to rows moving out of a table rebuilt beside itself,
/// under `apply --online`, where their key cascades (`ON DELETE CASCADE`, from the inverse's
/// delete rule): the offline step's delete of the moved rows deletes them with it, so they
/// are deleted before the switch-over, as `OnlineShadowReferences` clears links of keys that
/// clear:
/// 1. a `BEFORE INSERT OR UPDATE` trigger deletes a row written meanwhile with a link to a
///    moved row (an insert is skipped, an update deletes the row it updates): the row ends as
///    the offline cascade would end it, and the key beside, which points at the shadow, never
///    sees the link;
/// 2. batches delete the rows already there (whatever cascades from them goes with them, as
///    offline).
/// The application's write succeeds rather than fails: it is valid in the model it writes,
/// and refusing it would leave the row (its earlier link) where offline deletes it.
struct DeleteLinkingRows {
    /// The table holding the key's column, and the column.
    var table: String
    var column: String
    /// The table the rows move out of, and their entities.
    var referencedTable: String
    var entities: [String]

    var summary: String {
        "delete rows of \(table) whose \(column) links to rows of \(entities.joined(separator: ", ")) (moved out of \(referencedTable); its key cascades)"
    }

    func phases(in schema: String) -> [OnlinePhase] {
        let trigger = OnlineTrigger.named("cascade", table: table, column: column)
        let body: SQL = """
            BEGIN
                IF \(OnlineTrigger.linkWritten(column, to: referencedTable, entities: entities, in: schema)) THEN
                    IF TG_OP = 'UPDATE' THEN
                        DELETE FROM \(ident: schema, table) WHERE \(ident: "_pk") = OLD.\(ident: "_pk");
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
            does: "rows written with a link to rows of \(entities.joined(separator: ", ")) (moved out of \(referencedTable)) are deleted",
            batches: BatchedStatement(schema: schema, table: table, prefix: delete), summary: summary + ", in batches"
        )
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
