import SQLBuilding

/// Values of a column in the rows of entities that no longer have its property (a property
/// moved down to a sub-entity): dropped, as Core Data drops them.
struct ClearValues: SchemaChange {
    var kind: ChangeKind { .clearValues(self) }
    var table: String
    var column: String
    var entities: [String]
    /// What `apply --online` needs to build the column beside the old one (`describing`).
    var type = ""
    var defaultExpression: SQL?
    var covering: [CoveringConstraint] = []

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "UPDATE \(ident: schema, table) SET \(ident: column) = NULL WHERE \(ident: "_entity") IN (\(literals: entities)) AND \(ident: column) IS NOT NULL",
            lock: .rowExclusive, summary: "clear \(table).\(column) in rows of \(entities.joined(separator: ", ")) (property no longer theirs)"
        )]
    }
}

extension ClearValues: ColumnRebuild {
    /// The column's type and default, and what covers it, from the destination's layout.
    func describing(_ column: ColumnLayout, of table: TableLayout) -> ClearValues {
        var described = self
        described.type = column.type
        described.defaultExpression = column.defaultExpression
        described.covering = CoveringConstraint.over(column.name, of: table)
        return described
    }

    var rebuildSummary: String { statements(in: "")[0].summary }
    var swapsAtSwitchOver: Bool { true }

    var trigger: OnlineTrigger { OnlineTrigger.named("wipe", table: table, column: column) }
    var swapSummary: String { rebuildSummary }

    func fillingPhases(in schema: String) -> [OnlinePhase] {
        let entities: SQL = "(\(literals: self.entities))"
        var add: SQL = "ALTER TABLE \(ident: schema, table) ADD COLUMN \(ident: shadow) \(unsafeRaw: type)"
        if let defaultExpression { add.append(" DEFAULT \(defaultExpression)") }
        let body: SQL = "BEGIN NEW.\(ident: shadow) := CASE WHEN NEW.\(ident: "_entity") IN \(entities) THEN NULL ELSE NEW.\(ident: column) END; RETURN NEW; END"
        let batch: SQL = "UPDATE \(ident: schema, table) SET \(ident: shadow) = CASE WHEN \(ident: "_entity") IN \(entities) THEN NULL ELSE \(ident: column) END WHERE TRUE"
        return [.instant([PlannedStatement(add, lock: .accessExclusive, summary: "add \(table).\(column) anew beside the old column")])]
            + OnlinePhase.triggeredBatches(
                trigger, in: schema, timing: "BEFORE INSERT OR UPDATE", body: body,
                does: "rows written meanwhile get \(column) in the new column, but for rows of \(self.entities.joined(separator: ", "))",
                batches: BatchedStatement(schema: schema, table: table, prefix: batch),
                summary: "copy \(table).\(column) into the new column but for rows of \(self.entities.joined(separator: ", ")), in batches"
            )
    }

    func checkingPhases(in schema: String) -> [OnlinePhase] { [] }

    func swapStatements(in schema: String) -> [PlannedStatement] {
        [
            PlannedStatement("ALTER TABLE \(ident: schema, table) DROP COLUMN \(ident: column)", lock: .accessExclusive, summary: "drop the old \(table).\(column)"),
            PlannedStatement("ALTER TABLE \(ident: schema, table) RENAME COLUMN \(ident: shadow) TO \(ident: column)", lock: .accessExclusive, summary: "the new column takes the name \(column)"),
        ]
    }
}
