import SQLBuilding

/// Turns a lightweight step's changes, in the order the offline step runs them, into the
/// phases of `apply --online`:
/// 1. each change becomes its online form (`OnlineChange`): catalog changes one short
///    transaction each, backfills batches with a trigger keeping rows written meanwhile right,
///    constraints `NOT VALID` then validated, indexes `CONCURRENTLY`;
/// 2. what the old layout still needs while the backfills run (a column whose values moved, a
///    join table whose links moved) is dropped at the end, in the switch-over;
/// 3. the switch-over, one short transaction: the triggers go, those drops run, and the engine
///    records the new version in it.
/// Every change has an online form (`SchemaChange.onlineForm(in:)` has no default, so a new
/// kind of change does not compile without one); a form that cannot run refuses the step, with
/// its code and reason (`OnlineRefusal`).
enum OnlinePlanner {
    static func plan(_ changes: [any SchemaChange], schema: String) -> OnlinePlan {
        var phases: [OnlinePhase] = []
        var refusals: [OnlineRefusal] = []
        var deferred: [PlannedStatement] = []
        var rebuilt: [String] = []
        for change in CoveringConstraint.resolving(OnlineArrangement.arranged(changes, schema: schema)) {
            if case .shadowTable(let shadow) = change.kind { rebuilt.append(shadow.table.name) }
            switch change.onlineForm(in: schema) {
            case .phases(let own): phases += own
            case .atSwitchOver(let statements): deferred += statements
            case .phasesThenAtSwitchOver(let own, let statements): phases += own; deferred += statements
            case .refused(let reason): refusals.append(reason)
            }
        }
        if changes.contains(where: \.kind.isShortestFloatText) { phases = phases.map(\.readingFloatTextAsOffline) }
        let triggers = OnlinePlan(phases: phases, refusals: []).liveTriggers(after: phases.count)
        let switchOver = triggers.flatMap { $0.dropStatements(in: schema) } + deferred
        phases.append(OnlinePhase(
            summary: "switch over: " + (switchOver.isEmpty ? "record the new version" : switchOver.map(\.summary).joined(separator: "; ") + "; record the new version"),
            statements: switchOver, lock: switchOver.map(\.lock).max() ?? .rowExclusive, hold: .instant
        ))
        var plan = OnlinePlan(phases: phases, refusals: refusals)
        plan.rebuiltTables = rebuilt
        return plan
    }
}

/// What a change becomes under `apply --online`.
enum OnlineForm {
    case phases([OnlinePhase])
    /// Statements that must wait for the switch-over (the old layout is read until then).
    case atSwitchOver([PlannedStatement])
    /// Phases now, and statements at the switch-over (a column built beside one the application
    /// still reads, swapped in there).
    case phasesThenAtSwitchOver([OnlinePhase], [PlannedStatement])
    case refused(OnlineRefusal)
}

/// The conformance that gives a change its online form (`SchemaChange.onlineForm(in:)`, which
/// every change must have).
protocol OnlineChange: SchemaChange {
    func onlineForm(in schema: String) -> OnlineForm
}

/// Catalog changes: milliseconds under their lock, each in its own short transaction.
protocol InstantChange: OnlineChange {}

extension InstantChange {
    func onlineForm(in schema: String) -> OnlineForm {
        .phases([.instant(statements(in: schema))])
    }
}

extension OnlineTrigger {
    /// `orchestrator_online_<purpose>_<digest of table and column>`: short, and the same in
    /// every plan of the step, so a resumed run finds what an interrupted one made.
    static func named(_ purpose: String, table: String, column: String) -> OnlineTrigger {
        OnlineTrigger(table: table, name: prefix + purpose + "_" + digest(table + "." + column))
    }

    /// FNV-1a, 32 bits, in hex: for names only.
    static func digest(_ text: String) -> String {
        var hash: UInt32 = 2_166_136_261
        for byte in text.utf8 {
            hash = (hash ^ UInt32(byte)) &* 16_777_619
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }

    func dropStatements(in schema: String) -> [PlannedStatement] {
        var drops = [
            PlannedStatement("DROP TRIGGER IF EXISTS \(ident: name) ON \(ident: schema, table)", lock: .accessExclusive, summary: "drop trigger \(name) on \(table)"),
            PlannedStatement("DROP FUNCTION IF EXISTS \(ident: schema, name)()", lock: .none, summary: "drop function \(name)"),
        ]
        if let log { drops.append(PlannedStatement("DROP TABLE IF EXISTS \(ident: schema, log)", lock: .accessExclusive, summary: "drop log table \(log)")) }
        return drops
    }

    /// The function (PL/pgSQL `body`, run under `setting` when given, whatever the writing
    /// session's) and the row trigger calling it, replacing any an interrupted run left.
    func installStatements(in schema: String, timing: String, body: SQL, summary: String, setting: SQL? = nil) -> [PlannedStatement] {
        var function: SQL = "CREATE OR REPLACE FUNCTION \(ident: schema, name)() RETURNS trigger LANGUAGE plpgsql"
        if let setting { function.append(" SET \(setting)") }
        function.append(" AS \(SQL.dollarQuoted(body, tag: "online"))")
        return [
            PlannedStatement(function, lock: .none, summary: "function \(name): \(summary)"),
            PlannedStatement("DROP TRIGGER IF EXISTS \(ident: name) ON \(ident: schema, table)", lock: .accessExclusive, summary: "drop trigger \(name) on \(table) if left"),
            PlannedStatement(
                "CREATE TRIGGER \(ident: name) \(unsafeRaw: timing) ON \(ident: schema, table) FOR EACH ROW EXECUTE FUNCTION \(ident: schema, name)()",
                lock: .shareRowExclusive, summary: "trigger \(name) on \(table): \(summary)"
            ),
        ]
    }
}

// Rows of removed entities, under `apply --online`: the links to them are cleared, then they
// are deleted, each in batches under a trigger that gives the application's writes meanwhile
// the result the offline step would give them. `OnlineArrangement` runs both after the renames
// of tables and columns, so the triggers name them as they stay. `--allow-data-loss` is asked
// for as offline: the step's hazards are the same.

extension OnlineTrigger {
    /// A row trigger's condition: the row written links `column` anew to a row of `entities`
    /// in `table`.
    static func linkWritten(_ column: String, to table: String, entities: [String], in schema: String) -> SQL {
        let linked: SQL = "SELECT 1 FROM \(ident: schema, table) WHERE \(ident: "_pk") = NEW.\(ident: column) AND \(ident: "_entity") IN (\(literals: entities))"
        return """
            NEW.\(ident: column) IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.\(ident: column) IS DISTINCT FROM OLD.\(ident: column))
                   AND EXISTS (\(linked))
            """
    }
}
