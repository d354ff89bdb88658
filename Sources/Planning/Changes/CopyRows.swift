import SQLBuilding

/// The rows of entities moved out of their hierarchy, copied into the table of their new
/// hierarchy with their `_pk`; `_entity` takes the destination names.
struct CopyRows: SchemaChange {
    var kind: ChangeKind { .copyRows(self) }
    var fromTable: String
    var toTable: String
    /// Destination column -> source column, `_pk` first; `_entity` is derived from `renames`.
    var columns: [(destination: String, source: String)]
    /// Source entity name -> destination name, for every entity moved.
    var entities: [(from: String, to: String)]

    func statements(in schema: String) -> [PlannedStatement] {
        let sql: SQL = """
            INSERT INTO \(ident: schema, toTable) (\(idents: columns.map(\.destination) + ["_entity"])) \
            SELECT \(idents: columns.map(\.source)), \(UpdateEntityNames.renamed(entities)) \
            FROM \(ident: schema, fromTable) WHERE \(ident: "_entity") IN (\(literals: entities.map(\.from)))
            """
        return [PlannedStatement(sql, lock: .rowExclusive, summary: "copy rows of \(entities.map(\.from).joined(separator: ", ")) from \(fromTable) to \(toTable)")]
    }

    var hazards: [Hazard] {
        [.fullScan("copies the rows of \(entities.map(\.from).joined(separator: ", ")) from \(fromTable) to \(toTable)")]
    }
}

extension CopyRows: OnlineChange {
    func onlineForm(in schema: String) -> OnlineForm {
        let trigger = OnlineTrigger.named("move", table: fromTable, column: toTable)
        let moved: SQL = "(\(literals: entities.map(\.from)))"
        let destinations = columns.map(\.destination) + ["_entity"]
        var values = SQL.joined(columns.map { "NEW.\(ident: $0.source)" }, separator: ", ")
        values.append(", CASE NEW.\(ident: "_entity")")
        for entity in entities { values.append(" WHEN \(literal: entity.from) THEN \(literal: entity.to)") }
        values.append(" END")
        let updates = SQL.joined(destinations.dropFirst().map { "\(ident: $0) = EXCLUDED.\(ident: $0)" }, separator: ", ")
        let body: SQL = """
            BEGIN
                IF TG_OP <> 'INSERT' AND OLD.\(ident: "_entity") IN \(moved)
                   AND (TG_OP = 'DELETE' OR NEW.\(ident: "_pk") <> OLD.\(ident: "_pk") OR NEW.\(ident: "_entity") NOT IN \(moved)) THEN
                    DELETE FROM \(ident: schema, toTable) WHERE \(ident: "_pk") = OLD.\(ident: "_pk");
                END IF;
                IF TG_OP <> 'DELETE' AND NEW.\(ident: "_entity") IN \(moved) THEN
                    INSERT INTO \(ident: schema, toTable) (\(idents: destinations)) VALUES (\(values))
                    ON CONFLICT (\(ident: "_pk")) DO UPDATE SET \(updates);
                END IF;
                RETURN NULL;
            END
            """
        let copy = statements(in: schema)[0]
        return .phases(OnlinePhase.triggeredBatches(
            trigger, in: schema, timing: "AFTER INSERT OR UPDATE OR DELETE", body: body,
            does: "writes to rows of \(entities.map(\.from).joined(separator: ", ")) are mirrored into \(toTable)",
            batches: BatchedStatement(schema: schema, table: fromTable, prefix: copy.sql, suffix: " FOR SHARE ON CONFLICT DO NOTHING").analyzing(toTable),
            summary: copy.summary + ", in batches",
            truncate: TruncateFollowing(
                clearing: "DELETE FROM \(ident: schema, toTable) WHERE \(ident: "_entity") IN (\(literals: entities.map(\.to)))",
                cleared: "the rows of \(entities.map(\.to).joined(separator: ", ")) copied to \(toTable)"
            )
        ))
    }
}
