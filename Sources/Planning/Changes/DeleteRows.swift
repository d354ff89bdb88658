import ObjectModel
import SQLBuilding

/// Rows that leave a kept table: those of removed entities (lossy), or those of an entity moved
/// out of the hierarchy, once they were copied to their new table; the links of other rows to
/// those are cleared first (`MovedLinks`).
struct DeleteRows: SchemaChange {
    var kind: ChangeKind { .deleteRows(self) }
    var table: String
    /// Names as the rows hold them at that point of the step.
    var entities: [String]
    var isLossy: Bool
    /// Moved rows leaving: the table as the destination keeps it, and the foreign keys of the
    /// destination that point at it (`apply --online` builds it anew beside the old one).
    var staying: (layout: TableLayout, referencing: [(table: TableLayout, key: ForeignKey)])?
    /// The links to moved rows that `plan` names nowhere else (`LightweightDiff.lostLinks`).
    var lostLinks: [Hazard] = []

    func statements(in schema: String) -> [PlannedStatement] {
        clearings.flatMap { $0.statements(in: schema) } + [deletion(in: schema)]
    }

    func deletion(in schema: String) -> PlannedStatement {
        let why = isLossy ? "entities removed from the model" : "rows moved to their own table"
        return PlannedStatement(
            "DELETE FROM \(ident: schema, table) WHERE \(ident: "_entity") IN (\(literals: entities))",
            lock: .rowExclusive, summary: "delete rows of \(entities.joined(separator: ", ")) from \(table) (\(why))"
        )
    }

    var hazards: [Hazard] { lostLinks }
}

/// Links of other rows to rows of an entity moved out of its hierarchy. Core Data runs no
/// delete rule during a migration: the moved object is not deleted, its link from another
/// object just cannot stay, because the entity is no longer of the kind the relationship
/// points at. So, whatever the foreign key's ON DELETE action (clear, cascade, deny):
/// 1. a required link to a moved row stops the step before anything changes, naming the rows
///    (`DataCheck`, as Core Data's validation fails the same way);
/// 2. the links of hierarchy rows to moved rows are cleared just before the moved rows leave
///    the table (`DetachReferences`; a table's own key clears those of the rows that stay), so
///    the delete cascades nowhere and nothing denies it. A join table's links to moved rows go
///    with them (its key cascades): the link, not a row of an entity.
extension DeleteRows {
    /// Whether the link of `column` in `table` is required: nil when optional for every row,
    /// empty when for every row (`NOT NULL`), else the entities whose rows must fill it.
    static func requiredEntities(of column: String, in table: TableLayout) -> [String]? {
        if table.column(named: column)?.isNullable == false { return [] }
        return table.checks.first { $0.kind.requiredColumn == column }?.kind.entities
    }

    /// The hierarchy tables' keys pointing at the table the rows leave (destination names).
    var movedLinks: [(table: TableLayout, key: ForeignKey)] {
        guard !isLossy, let staying else { return [] }
        return staying.referencing.filter { $0.table.kind.isHierarchy }
    }

    /// Every link to a moved row that may be cleared, cleared (a `NOT NULL` column is left to
    /// the required-link check).
    var clearings: [DetachReferences] {
        movedLinks.compactMap { referencing, key in
            let required = Self.requiredEntities(of: key.column, in: referencing)
            guard required != [] else { return nil }
            return DetachReferences(
                table: referencing.name, column: key.column, referencedTable: table, entities: entities, why: "moved out of \(table)",
                keeping: (referencing.name == table ? entities : []) + (required ?? []), key: key
            )
        }
    }

    /// The rows whose required link points at a moved row, counted where the moved rows leave
    /// (`apply --online` runs them before and again in the switch-over).
    func requiredLinkChecks(in schema: String) -> [PlannedStatement] {
        movedLinks.compactMap { referencing, key in
            guard let required = Self.requiredEntities(of: key.column, in: referencing) else { return nil }
            var rows: SQL = """
                SELECT \(ident: "_pk") FROM \(ident: schema, referencing.name) WHERE \(ident: key.column) IN \
                (SELECT \(ident: "_pk") FROM \(ident: schema, table) WHERE \(ident: "_entity") IN (\(literals: entities)))
                """
            if !required.isEmpty { rows.append(" AND \(ident: "_entity") IN (\(literals: required))") }
            if referencing.name == table { rows.append(" AND \(ident: "_entity") NOT IN (\(literals: entities))") }
            return DataCheck.raising(rows: rows, problem: Self.requiredLinkProblem(referencing.name, key.column, entities, table), hint: Self.requiredLinkHint)
        }
    }

    static func requiredLinkProblem(_ table: String, _ column: String, _ entities: [String], _ movedFrom: String) -> String {
        "rows of \(table) whose required \(column) links to rows of \(entities.joined(separator: ", ")) (moved out of \(movedFrom))"
    }

    static let requiredLinkHint = "delete or relink those rows first, or write a mapping model that says what becomes of them"
}

extension DeleteRows {
    /// 1. A `BEFORE INSERT OR UPDATE OF _entity` trigger skips rows of the removed entities
    ///    written meanwhile (the step would delete them: the write's effect is the step's), so
    ///    none arrives behind the batches; other updates of those rows go through (a foreign
    ///    key's action among them), the batches delete the rows anyway; 2. batches delete the
    ///    rows already there, as the step's own write (`ClearedLinks.ownWrite`): the links
    ///    cleared to them are forgotten, no delete rule acts.
    func removedRowsForm(in schema: String) -> OnlineForm {
        let trigger = OnlineTrigger.named("removed", table: table, column: "_entity")
        let body: SQL = "BEGIN IF NEW.\(ident: "_entity") IN (\(literals: entities)) THEN RETURN NULL; END IF; RETURN NEW; END"
        let delete = deletion(in: schema)
        var batches = BatchedStatement(schema: schema, table: table, prefix: delete.sql)
        batches.setup = [ClearedLinks.ownWrite]
        return .phases(OnlinePhase.triggeredBatches(
            trigger, in: schema, timing: "BEFORE INSERT OR UPDATE OF _entity", body: body,
            does: "rows of \(entities.joined(separator: ", ")) (removed) written are skipped",
            batches: batches, summary: delete.summary + ", in batches"
        ))
    }
}

extension DeleteRows: OnlineChange {
    /// Moved rows leave the old table in the switch-over: the application reads them there
    /// until then. The links to them are cleared before, under triggers (`MovedLinks`); rows
    /// whose required link points at them stop the step at its start (the step's `DataCheck`)
    /// and again in the switch-over, for links written meanwhile. Rows of removed entities go
    /// in batches (`OnlineTrigger.linkWritten`, OnlinePlanner.swift).
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
