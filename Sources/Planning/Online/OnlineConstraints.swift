import SQLBuilding

// Constraints and indexes under `apply --online`: added `NOT VALID` (a catalog change) and then
// validated under SHARE UPDATE EXCLUSIVE, which lets reads and writes go on; indexes built
// `CONCURRENTLY`. Always so, even on a table the step created: a backfill may have filled it.

/// `VALIDATE CONSTRAINT`: reads every row under SHARE UPDATE EXCLUSIVE.
func validate(_ constraint: String, on table: String, in schema: String) -> OnlinePhase {
    let statement = PlannedStatement(
        "ALTER TABLE \(ident: schema, table) VALIDATE CONSTRAINT \(ident: constraint)",
        lock: .shareUpdateExclusive, summary: "validate \(constraint) on \(table)"
    )
    return OnlinePhase(summary: statement.summary, statements: [statement], lock: .shareUpdateExclusive, hold: .scan)
}
