import SQLBuilding

// Constraints and indexes under `apply --online`: added `NOT VALID` (a catalog change) and then
// validated under SHARE UPDATE EXCLUSIVE, which lets reads and writes go on; indexes built
// `CONCURRENTLY`. Always so, even on a table the step created: a backfill may have filled it.

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

extension AddForeignKey: OnlineChange {
    /// A key replacing one with another delete rule drops it in the same transaction, after a
    /// trigger that keeps the old rule acting until the switch-over (`ReplacedKeyRule`) is in:
    /// a phase of its own, as a resumed run reinstalls its trigger by running it again.
    func onlineForm(in schema: String) -> OnlineForm {
        let add = PlannedStatement(
            """
            ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: foreignKey.name) \
            FOREIGN KEY (\(ident: foreignKey.column)) REFERENCES \(ident: schema, foreignKey.referencedTable) (\(ident: "_pk")) \
            ON DELETE \(unsafeRaw: foreignKey.onDelete) NOT VALID
            """,
            lock: .shareRowExclusive, summary: "foreign key \(table).\(foreignKey.column) -> \(foreignKey.referencedTable), for new writes"
        )
        guard dropsReplacedKey, let replacing else {
            return .phases([.instant([add]), validate(foreignKey.name, on: table, in: schema)])
        }
        let rule = ReplacedKeyRule(key: self, old: replacing)
        var keep = OnlinePhase.instant(rule.installStatements(in: schema), summary: rule.summary)
        keep.installs = [rule.trigger]
        let replace = OnlinePhase.instant(
            DropConstraint(table: table, name: replacing.name).statements(in: schema) + [add],
            summary: "\(add.summary), in place of \(replacing.name), whose rule (\(replacing.onDelete)) the trigger keeps until the switch-over"
        )
        return .phases([keep, replace, validate(foreignKey.name, on: table, in: schema)])
    }
}

/// `VALIDATE CONSTRAINT`: reads every row under SHARE UPDATE EXCLUSIVE.
func validate(_ constraint: String, on table: String, in schema: String) -> OnlinePhase {
    let statement = PlannedStatement(
        "ALTER TABLE \(ident: schema, table) VALIDATE CONSTRAINT \(ident: constraint)",
        lock: .shareUpdateExclusive, summary: "validate \(constraint) on \(table)"
    )
    return OnlinePhase(summary: statement.summary, statements: [statement], lock: .shareUpdateExclusive, hold: .scan)
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

extension CreateIndex: OnlineChange {
    func onlineForm(in schema: String) -> OnlineForm {
        .phases([.concurrently(PlannedStatement(
            "CREATE INDEX CONCURRENTLY \(ident: index.name) ON \(ident: schema, table) (\(idents: index.columns))",
            lock: .shareUpdateExclusive, summary: "index \(table) (\(index.columns.joined(separator: ", "))), concurrently"
        ), index: index.name)])
    }
}

extension AddUnique: OnlineChange {
    /// The unique index built concurrently; a root entity's `UNIQUE` constraint then adopts it.
    func onlineForm(in schema: String) -> OnlineForm {
        var sql: SQL = "CREATE UNIQUE INDEX CONCURRENTLY \(ident: unique.name) ON \(ident: schema, table) (\(idents: unique.columns))"
        if let scope = unique.entityScope {
            sql.append(" WHERE \(ident: "_entity") IN (\(literals: scope))")
        }
        let columns = unique.columns.joined(separator: ", ")
        var phases: [OnlinePhase] = [.concurrently(
            PlannedStatement(sql, lock: .shareUpdateExclusive, summary: "unique index \(table) (\(columns)), concurrently"), index: unique.name
        )]
        if unique.entityScope == nil {
            phases.append(.instant([PlannedStatement(
                "ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: unique.name) UNIQUE USING INDEX \(ident: unique.name)",
                lock: .accessExclusive, summary: "unique \(table) (\(columns)) using the index"
            )]))
        }
        return .phases(phases)
    }
}
