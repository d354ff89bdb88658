import SQLBuilding

// Values moved between the columns siblings share (docs/store-format.md), under `apply
// --online`. The application reads the old columns until the switch-over, so none loses a value
// before it:
// 1. values copied into a column of their own: the backfill's pattern (a trigger, then batches);
//    a column whose values all moved is dropped in the switch-over;
// 2. values cleared where the property is no longer the entity's: the column is built anew
//    beside the old one without them, as a widening builds it (a trigger, batches, what covers
//    it built on it), and swapped in by the switch-over.
// BEFORE triggers fire in the order of their names, as the offline step runs these changes:
// entity renames (`…__entity_…`, first of all), so that `_entity` reads as the destination names these use,
// then copies (`…_values_…`), then widenings (`…_widen_…`, which read what a copy wrote), then
// clears (`…_wipe_…`).

extension CopyColumnValues: OnlineChange {
    func onlineForm(in schema: String) -> OnlineForm {
        let body: SQL = """
            BEGIN IF NEW.\(ident: "_entity") IN (\(literals: entities)) \
            THEN NEW.\(ident: column) := NEW.\(ident: from)::\(unsafeRaw: type); END IF; RETURN NEW; END
            """
        let offline = statements(in: schema)[0]
        return .phases(OnlinePhase.triggeredBatches(
            OnlineTrigger.named("values", table: table, column: column), in: schema, timing: "BEFORE INSERT OR UPDATE", body: body,
            does: "rows of \(entities.joined(separator: ", ")) written meanwhile get \(from) copied into \(column)",
            batches: BatchedStatement(schema: schema, table: table, prefix: offline.sql), summary: offline.summary + ", in batches"
        ))
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
