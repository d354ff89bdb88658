import SQLBuilding

/// Values of some entities' rows copied from one column of their table into another: a column
/// sibling entities shared is split when their declarations diverge, or columns are merged
/// when they agree again (docs/store-format.md). The type cast is one the inferred mapping
/// allowed (the same type, or a lossless widening).
struct CopyColumnValues: SchemaChange {
    var kind: ChangeKind { .copyColumnValues(self) }
    var table: String
    var column: String
    /// The destination column's SQL type, from `ColumnTypes`.
    var type: String
    var from: String
    var entities: [String]

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "UPDATE \(ident: schema, table) SET \(ident: column) = \(ident: from)::\(unsafeRaw: type) WHERE \(ident: "_entity") IN (\(literals: entities))",
            lock: .rowExclusive, summary: "copy \(table).\(from) into \(table).\(column) for rows of \(entities.joined(separator: ", "))"
        )]
    }

    var hazards: [Hazard] {
        [.fullScan("copies \(table).\(from) into \(table).\(column) in the rows of \(entities.joined(separator: ", "))")]
    }
}

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
