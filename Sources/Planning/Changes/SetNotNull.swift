import SQLBuilding

/// A column made NOT NULL at the end of the step, after NULLs were backfilled (or the rows were
/// checked to have none). PostgreSQL reads every row to validate it.
struct SetNotNull: SchemaChange {
    var kind: ChangeKind { .setNotNull(self) }
    var table: String
    var column: String
    /// The table has rows from the source store.
    var scansRows: Bool

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) SET NOT NULL",
            lock: .accessExclusive, summary: "make \(table).\(column) NOT NULL"
        )]
    }

    var hazards: [Hazard] {
        scansRows ? [.fullScan("making \(table).\(column) NOT NULL reads every row of \(table) under an ACCESS EXCLUSIVE lock")] : []
    }
}

extension SetNotNull: OnlineChange {
    /// A valid `CHECK (column IS NOT NULL)` lets `SET NOT NULL` skip its scan, so the ACCESS
    /// EXCLUSIVE lock lasts a catalog change; the helper check goes in the same transaction.
    func onlineForm(in schema: String) -> OnlineForm {
        let check = OnlineTrigger.prefix + "not_null_" + OnlineTrigger.digest(table + "." + column)
        return .phases([
            .instant([PlannedStatement(
                "ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: check) CHECK (\(ident: column) IS NOT NULL) NOT VALID",
                lock: .accessExclusive, summary: "check \(table).\(column) IS NOT NULL, for new writes"
            )]),
            validate(check, on: table, in: schema),
            .instant([
                PlannedStatement(
                    "ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) SET NOT NULL",
                    lock: .accessExclusive, summary: "make \(table).\(column) NOT NULL (the valid check spares the scan)"
                ),
                PlannedStatement(
                    "ALTER TABLE \(ident: schema, table) DROP CONSTRAINT \(ident: check)",
                    lock: .accessExclusive, summary: "drop the helper check"
                ),
            ], summary: "make \(table).\(column) NOT NULL (the valid check spares the scan), drop the helper check"),
        ])
    }
}
