import SQLBuilding

/// Rows of renamed entities get their new name in `_entity`, which names each row's concrete
/// entity. Runs while the table's `_entity` check is dropped (it lists the names).
struct UpdateEntityNames: SchemaChange {
    var kind: ChangeKind { .updateEntityNames(self) }
    var table: String
    /// Source name -> destination name, for entities whose rows stay in this table.
    var renames: [(from: String, to: String)]

    func statements(in schema: String) -> [PlannedStatement] {
        let sql: SQL = """
            UPDATE \(ident: schema, table) SET \(ident: "_entity") = \(Self.renamed(renames)) \
            WHERE \(ident: "_entity") IN (\(literals: renames.map(\.from)))
            """
        let names = renames.map { "\($0.from) -> \($0.to)" }.joined(separator: ", ")
        return [PlannedStatement(sql, lock: .rowExclusive, summary: "rename entities in \(table)._entity: \(names)")]
    }

    /// A row's new `_entity`: `CASE _entity WHEN 'Old' THEN 'New' … END` (`CopyRows` too).
    static func renamed(_ renames: [(from: String, to: String)]) -> SQL {
        let cases = renames.map { rename -> SQL in "WHEN \(literal: rename.from) THEN \(literal: rename.to)" }
        return "CASE \(ident: "_entity") \(SQL.joined(cases, separator: " ")) END"
    }

    var hazards: [Hazard] {
        [.fullScan("updates _entity in every row of \(table) whose entity was renamed (\(renames.map(\.from).joined(separator: ", ")))")]
    }
}

extension UpdateEntityNames: OnlineChange {
    /// The trigger's name sorts before every other BEFORE trigger's (`_` before letters), so it
    /// fires first, as the offline step renames entities before its backfills and copies: those
    /// read `_entity` by the destination's names.
    func onlineForm(in schema: String) -> OnlineForm {
        let trigger = OnlineTrigger.named("_entity", table: table, column: "_entity")
        var cases: SQL = ""
        for rename in renames { cases.append(" WHEN \(literal: rename.from) THEN \(literal: rename.to)") }
        let body: SQL = """
            BEGIN IF NEW.\(ident: "_entity") IN (\(literals: renames.map(\.from))) \
            THEN NEW.\(ident: "_entity") := CASE NEW.\(ident: "_entity")\(cases) END; END IF; RETURN NEW; END
            """
        let offline = statements(in: schema)[0]
        return .phases(OnlinePhase.triggeredBatches(
            trigger, in: schema, timing: "BEFORE INSERT OR UPDATE", body: body, does: "rows written meanwhile get the new entity names",
            batches: BatchedStatement(schema: schema, table: table, prefix: offline.sql), summary: offline.summary + ", in batches"
        ))
    }
}
