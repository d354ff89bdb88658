import SQLBuilding

struct AddCheck: SchemaChange {
    var kind: ChangeKind { .addCheck(self) }
    var table: String
    var check: CheckConstraint
    var scansRows: Bool

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            "ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: check.name) CHECK (\(check.expression))",
            lock: .accessExclusive, summary: "check \(check.name) on \(table)"
        )]
    }

    var hazards: [Hazard] {
        scansRows ? [.fullScan("validating \(check.name) reads every row of \(table) under an ACCESS EXCLUSIVE lock")] : []
    }
}

extension AddCheck: OnlineChange {
    func onlineForm(in schema: String) -> OnlineForm {
        .phases([
            .instant([PlannedStatement(
                "ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: check.name) CHECK (\(check.expression)) NOT VALID",
                lock: .accessExclusive, summary: "check \(check.name) on \(table), for new writes"
            )]),
            validate(check.name, on: table, in: schema),
        ])
    }
}
