import SQLBuilding

// An entity moved between tables, under `apply --online`: its rows stay in the old table,
// where the application keeps writing them, until the switch-over.
// 1. A trigger on the old table mirrors every insert, update and delete of those rows into
//    the new table (an upsert by `_pk`, so a row the batches already copied takes the write);
// 2. batches copy the rows already there, `FOR SHARE ON CONFLICT DO NOTHING` (a row updated
//    meanwhile is copied as committed, and a row the trigger wrote is left to it);
// 3. the switch-over drops the trigger, deletes the moved rows from the old table and
//    continues the new table's identity after its largest `_pk` (`OnlineArrangement` puts the
//    foreign keys and the `_entity` check that depend on those rows around it).

extension CopyRows: OnlineChange {
    func onlineForm(in schema: String) -> OnlineForm {
        let trigger = OnlineTrigger.named("move", table: fromTable, column: toTable)
        let moved: SQL = "(\(literals: entities.map(\.from)))"
        let destinations = columns.map(\.destination) + ["_entity"]
        var values = SQL.joined(columns.map { "NEW.\(ident: $0.source)" }, separator: ", ")
        values.append(", CASE NEW.\(ident: "_entity")")
        for entity in entities { values.append(" WHEN \(literal: entity.from) THEN \(literal: entity.to)") }
        values.append(" END")
        let updates = SQL.joined(destinations.dropFirst().map { "\(ident: $0) = EXCLUDED.\(ident: $0)" }, separator: ", ")
        let body: SQL = """
            BEGIN
                IF TG_OP <> 'INSERT' AND OLD.\(ident: "_entity") IN \(moved)
                   AND (TG_OP = 'DELETE' OR NEW.\(ident: "_pk") <> OLD.\(ident: "_pk") OR NEW.\(ident: "_entity") NOT IN \(moved)) THEN
                    DELETE FROM \(ident: schema, toTable) WHERE \(ident: "_pk") = OLD.\(ident: "_pk");
                END IF;
                IF TG_OP <> 'DELETE' AND NEW.\(ident: "_entity") IN \(moved) THEN
                    INSERT INTO \(ident: schema, toTable) (\(idents: destinations)) VALUES (\(values))
                    ON CONFLICT (\(ident: "_pk")) DO UPDATE SET \(updates);
                END IF;
                RETURN NULL;
            END
            """
        let copy = statements(in: schema)[0]
        return .phases(OnlinePhase.triggeredBatches(
            trigger, in: schema, timing: "AFTER INSERT OR UPDATE OR DELETE", body: body,
            does: "writes to rows of \(entities.map(\.from).joined(separator: ", ")) are mirrored into \(toTable)",
            batches: BatchedStatement(schema: schema, table: fromTable, prefix: copy.sql, suffix: " FOR SHARE ON CONFLICT DO NOTHING"),
            summary: copy.summary + ", in batches",
            truncate: TruncateFollowing(
                clearing: "DELETE FROM \(ident: schema, toTable) WHERE \(ident: "_entity") IN (\(literals: entities.map(\.to)))",
                cleared: "the rows of \(entities.map(\.to).joined(separator: ", ")) copied to \(toTable)"
            )
        ))
    }
}

extension ResetIdentity: OnlineChange {
    /// Once no row can arrive through the mirroring trigger any more.
    func onlineForm(in schema: String) -> OnlineForm {
        .atSwitchOver(statements(in: schema))
    }
}

extension DeleteRows: OnlineChange {
    /// Moved rows leave the old table in the switch-over: the application reads them there
    /// until then. The links to them are cleared before, under triggers (`MovedLinks`); rows
    /// whose required link points at them stop the step at its start (the step's `DataCheck`)
    /// and again in the switch-over, for links written meanwhile. Rows of removed entities go
    /// in batches (`OnlineRemovedRows`).
    func onlineForm(in schema: String) -> OnlineForm {
        if isLossy { return removedRowsForm(in: schema) }
        let clearing = clearings.flatMap { clearing -> [OnlinePhase] in
            guard case .phases(let phases) = clearing.onlineForm(in: schema) else { preconditionFailure("links are cleared in phases") }
            return phases
        }
        let switchOver = requiredLinkChecks(in: schema) + [deletion(in: schema)]
        return clearing.isEmpty ? .atSwitchOver(switchOver) : .phasesThenAtSwitchOver(clearing, switchOver)
    }
}

extension DropIndex: OnlineChange {
    /// An index over a column on its way out serves the column's foreign key (its delete rule
    /// looks rows up by it) until the column's drop takes it along.
    func onlineForm(in schema: String) -> OnlineForm {
        goesWithItsColumn ? .phases([]) : .phases([.instant(statements(in: schema))])
    }
}

/// Statements that run in the switch-over, in the step's order: what `OnlineArrangement`
/// moves there from where the offline step runs it.
struct AtSwitchOver: OnlineChange {
    var deferred: [PlannedStatement]

    func statements(in schema: String) -> [PlannedStatement] { deferred }

    func onlineForm(in schema: String) -> OnlineForm { .atSwitchOver(deferred) }
}

/// A foreign key that points at moved rows in their new table, built while the key it
/// replaces (on the same column, pointing at the old table) keeps acting: `NOT VALID` under a
/// temporary name, validated; the switch-over drops the old key and renames the new one.
struct ForeignKeyBeside: OnlineChange {
    var key: AddForeignKey
    /// The key it replaces.
    var replaced: String

    var temporaryName: String { OnlineTrigger.prefix + "fk_" + OnlineTrigger.digest(key.table + "." + key.foreignKey.column) }

    func statements(in schema: String) -> [PlannedStatement] { key.statements(in: schema) }

    func onlineForm(in schema: String) -> OnlineForm {
        var beside = key
        beside.foreignKey.name = temporaryName
        return beside.onlineForm(in: schema)
    }

    /// Before the moved rows are deleted from the old table, so the old key's delete rule
    /// does not act on the rows that link to them.
    func switchOver(in schema: String) -> [PlannedStatement] {
        let table = key.table
        return [
            PlannedStatement("ALTER TABLE \(ident: schema, table) DROP CONSTRAINT \(ident: replaced)", lock: .accessExclusive, summary: "drop constraint \(replaced) on \(table) (its rows moved)"),
            PlannedStatement(
                "ALTER TABLE \(ident: schema, table) RENAME CONSTRAINT \(ident: temporaryName) TO \(ident: key.foreignKey.name)",
                lock: .accessExclusive, summary: "foreign key \(table).\(key.foreignKey.column) -> \(key.foreignKey.referencedTable) takes the name \(key.foreignKey.name)"
            ),
        ]
    }
}
