import SQLBuilding

/// NULLs of a property made required are set to its default, in the rows of the entities that
/// must have it (nil: every row of the table).
struct BackfillNulls: SchemaChange {
    var kind: ChangeKind { .backfillNulls(self) }
    var table: String
    var column: String
    /// The column's default expression.
    var value: SQL
    var entities: [String]?

    func statements(in schema: String) -> [PlannedStatement] {
        var sql: SQL = "UPDATE \(ident: schema, table) SET \(ident: column) = \(value) WHERE \(ident: column) IS NULL"
        if let entities { sql.append(" AND \(ident: "_entity") IN (\(literals: entities))") }
        return [PlannedStatement(sql, lock: .rowExclusive, summary: "backfill NULLs of \(table).\(column) with its default")]
    }

    var hazards: [Hazard] {
        [.fullScan("backfilling \(table).\(column) reads every row of \(table) and writes each NULL")]
    }
}

extension BackfillNulls: OnlineChange {
    func onlineForm(in schema: String) -> OnlineForm {
        let trigger = OnlineTrigger.named("backfill", table: table, column: column)
        var condition: SQL = "NEW.\(ident: column) IS NULL"
        if let entities { condition.append(" AND NEW.\(ident: "_entity") IN (\(literals: entities))") }
        let body: SQL = "BEGIN IF \(condition) THEN NEW.\(ident: column) := \(value); END IF; RETURN NEW; END"
        var prefix: SQL = "UPDATE \(ident: schema, table) SET \(ident: column) = \(value) WHERE \(ident: column) IS NULL"
        if let entities { prefix.append(" AND \(ident: "_entity") IN (\(literals: entities))") }
        return .phases(OnlinePhase.triggeredBatches(
            trigger, in: schema, timing: "BEFORE INSERT OR UPDATE", body: body, does: "rows written meanwhile get \(column)'s default for NULL",
            batches: BatchedStatement(schema: schema, table: table, prefix: prefix), summary: "backfill NULLs of \(table).\(column) with its default, in batches"
        ))
    }
}
