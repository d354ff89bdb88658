import SQLBuilding

/// A column's type changes between numbers (`NumberConversion`). Values that would not convert
/// exactly were counted first (`DataCheck`), so every value converts exactly; PostgreSQL
/// rewrites the table and its indexes under an ACCESS EXCLUSIVE lock.
struct AlterColumnType: SchemaChange {
    var kind: ChangeKind { .alterColumnType(self) }
    var table: String
    var column: String
    var from: String
    var to: String
    /// The conversion of the column's value; nil: PostgreSQL's own cast.
    var using: SQL?
    /// The old default cannot be cast to the new type: dropped first.
    var dropsDefault = false
    /// What `apply --online` needs to build the column beside the old one (`describing`).
    var isNotNull = false
    var defaultExpression: SQL?
    var covering: [CoveringConstraint] = []

    func statements(in schema: String) -> [PlannedStatement] {
        var statements: [PlannedStatement] = []
        if dropsDefault {
            statements.append(PlannedStatement(
                "ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) DROP DEFAULT",
                lock: .accessExclusive, summary: "drop default of \(table).\(column) before its type changes"
            ))
        }
        var alter: SQL = "ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: column) TYPE \(unsafeRaw: to)"
        if let using { alter.append(" USING \(using)") }
        statements.append(PlannedStatement(alter, lock: .accessExclusive, summary: "change \(table).\(column) from \(from) to \(to)"))
        return statements
    }

    var hazards: [Hazard] {
        [
            .tableRewrite("changing \(table).\(column) from \(from) to \(to) rewrites the table and its indexes"),
            .longLock("\(table) is locked against reads and writes while it is rewritten"),
        ]
    }
}

// A column whose type widens, under `apply --online`: instead of `ALTER COLUMN … TYPE`, which
// rewrites the table under ACCESS EXCLUSIVE, the new column is built beside the old one:
// 1. add the new column (nullable, with the destination's default) under a temporary name;
// 2. a `BEFORE INSERT OR UPDATE` trigger sets it from the old column in every row written;
// 3. batches set it in the rows already there;
// 4. a NOT NULL column gets a `CHECK … NOT VALID`, validated while writes go on; the indexes
//    and constraints over the column are built on the new one (`CoveringConstraint`);
// 5. one short transaction swaps it in: the trigger goes, `SET NOT NULL` (no scan given the
//    valid check), the old column is dropped and the new one takes its name, and so do the
//    indexes and constraints built on it.

extension AlterColumnType: ColumnRebuild {
    var rebuildSummary: String { "change \(table).\(column) from \(from) to \(to)" }
    var swapsAtSwitchOver: Bool { false }

    /// NOT NULL kept (a column made NOT NULL or nullable by the step is so by its own change),
    /// the destination's default, and the indexes and constraints over the column (which
    /// PostgreSQL rebuilds along with an `ALTER COLUMN … TYPE`, and which a column built beside
    /// the old one builds beside it).
    func describing(_ column: ColumnLayout, from sourceColumn: ColumnLayout, of table: TableLayout) -> AlterColumnType {
        var described = self
        described.isNotNull = !sourceColumn.isNullable && !column.isNullable
        described.defaultExpression = column.defaultExpression
        described.covering = CoveringConstraint.over(column.name, of: table)
        return described
    }

    private var digest: String { OnlineTrigger.digest(table + "." + column) }
    /// Fires after the copies' trigger (by name): a column swapped in at the switch-over with
    /// one whose values are cleared (`JointSwap`) gets the values the step copies into it.
    var trigger: OnlineTrigger { OnlineTrigger(table: table, name: OnlineTrigger.prefix + "widen_" + digest) }
    private var notNullCheck: String { OnlineTrigger.prefix + "not_null_" + digest }
    var swapSummary: String { "switch \(table).\(column) over to \(to): drop the trigger and the old column, rename the new one" }

    func fillingPhases(in schema: String) -> [OnlinePhase] {
        let converted: SQL = using ?? "\(ident: column)::\(unsafeRaw: to)"

        // The offline statements begin with the default's drop when it cannot be cast.
        var add = dropsDefault ? [statements(in: schema)[0]] : []
        var addColumn: SQL = "ALTER TABLE \(ident: schema, table) ADD COLUMN \(ident: shadow) \(unsafeRaw: to)"
        if let defaultExpression { addColumn.append(" DEFAULT \(defaultExpression)") }
        add.append(PlannedStatement(addColumn, lock: .accessExclusive, summary: "add \(table).\(column) as \(to) beside the old column"))

        // The conversion reads the column by name: the trigger gives it the row's value so.
        let body: SQL = "BEGIN NEW.\(ident: shadow) := (SELECT \(converted) FROM (SELECT NEW.\(ident: column) AS \(ident: column)) AS r); RETURN NEW; END"
        var install = OnlinePhase.instant(
            trigger.installStatements(in: schema, timing: "BEFORE INSERT OR UPDATE", body: body, summary: "rows written get \(column) as \(to)", setting: triggerSetting),
            summary: "trigger on \(table): rows written meanwhile get \(column) as \(to) too"
        )
        install.installs = [trigger]
        return [
            .instant(add, summary: "add \(table).\(column) as \(to) beside the old column"),
            install,
            .batched(
                BatchedStatement(schema: schema, table: table, prefix: "UPDATE \(ident: schema, table) SET \(ident: shadow) = \(converted) WHERE TRUE"),
                summary: "convert \(table).\(column) to \(to) into the new column, in batches"
            ),
        ]
    }

    func checkingPhases(in schema: String) -> [OnlinePhase] {
        guard isNotNull else { return [] }
        return [
            .instant([PlannedStatement(
                "ALTER TABLE \(ident: schema, table) ADD CONSTRAINT \(ident: notNullCheck) CHECK (\(ident: shadow) IS NOT NULL) NOT VALID",
                lock: .accessExclusive, summary: "check the new \(table).\(column) IS NOT NULL, for new writes"
            )]),
            validate(notNullCheck, on: table, in: schema),
        ]
    }

    func swapStatements(in schema: String) -> [PlannedStatement] {
        var swap: [PlannedStatement] = []
        if isNotNull {
            swap += [
                PlannedStatement("ALTER TABLE \(ident: schema, table) ALTER COLUMN \(ident: shadow) SET NOT NULL", lock: .accessExclusive, summary: "make the new \(table).\(column) NOT NULL (the valid check spares the scan)"),
                PlannedStatement("ALTER TABLE \(ident: schema, table) DROP CONSTRAINT \(ident: notNullCheck)", lock: .accessExclusive, summary: "drop the helper check"),
            ]
        }
        return swap + [
            PlannedStatement("ALTER TABLE \(ident: schema, table) DROP COLUMN \(ident: column)", lock: .accessExclusive, summary: "drop the old \(table).\(column)"),
            PlannedStatement("ALTER TABLE \(ident: schema, table) RENAME COLUMN \(ident: shadow) TO \(ident: column)", lock: .accessExclusive, summary: "the new column takes the name \(column)"),
        ]
    }
}

extension AlterColumnType {
    /// The setting the trigger function converting the column runs under, when it reads
    /// floating-point numbers as text.
    var triggerSetting: SQL? {
        NumberColumnConversion(from: from, to: to)?.readsFloatText == true ? ShortestFloatText.setting : nil
    }
}
