import SQLBuilding

/// A foreign key: recreated when its delete rule or referenced table changes.
struct AddForeignKey: SchemaChange {
    var kind: ChangeKind { .addForeignKey(self) }
    var table: String
    var foreignKey: ForeignKey
    var scansRows: Bool
    /// The source's key on the same column and referenced table, with another delete rule,
    /// that this one replaces (dropped at the step's start).
    var replacing: ForeignKey? = nil
    /// `apply --online`: the replaced key is dropped here, in the transaction that adds this
    /// one, rather than at the step's start (`OnlineArrangement`).
    var dropsReplacedKey = false

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement(
            """
            ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: foreignKey.name) \
            FOREIGN KEY (\(ident: foreignKey.column)) REFERENCES \(ident: schema, foreignKey.referencedTable) (\(ident: "_pk")) \
            ON DELETE \(unsafeRaw: foreignKey.onDelete)
            """,
            lock: .shareRowExclusive, summary: "foreign key \(table).\(foreignKey.column) -> \(foreignKey.referencedTable)"
        )]
    }

    var hazards: [Hazard] {
        scansRows ? [.fullScan("validating \(foreignKey.name) reads every row of \(table)")] : []
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
