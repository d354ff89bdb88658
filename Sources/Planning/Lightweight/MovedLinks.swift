import ObjectModel
import SQLBuilding

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

extension LightweightDiff {
    /// Before anything changes: rows whose required link points at a row moving out of
    /// `sourceTable` with `delete` stop the step (source names; `delete` has the destination's).
    mutating func checkRequiredLinks(of delete: DeleteRows, movingOutOf sourceTable: String) {
        for (referencing, key) in delete.movedLinks {
            guard let required = DeleteRows.requiredEntities(of: key.column, in: referencing),
                  let sourceReferencing = pairing.sourceTableOf[referencing.name],
                  let sourceColumn = pairing.sourceColumnOf[referencing.name]?[key.column] else { continue }
            // Entities new in the destination have no rows to check.
            let sourceEntities = required.compactMap(pairing.sourceEntity(ofDestination:))
            guard required.isEmpty || !sourceEntities.isEmpty else { continue }
            var offending: SQL = required.isEmpty ? "true" : "\(ident: "_entity") IN (\(literals: sourceEntities))"
            if sourceReferencing == sourceTable { offending.append(" AND \(ident: "_entity") NOT IN (\(literals: delete.entities))") }
            add(.checkData, DataCheck(
                table: sourceReferencing, offending: offending,
                problem: DeleteRows.requiredLinkProblem(sourceReferencing, sourceColumn, delete.entities, sourceTable),
                hint: DeleteRows.requiredLinkHint, linkingTo: (sourceColumn, sourceTable, delete.entities)
            ))
        }
    }

    /// What `plan` names of the links to moved rows that are cleared or dropped: a link whose
    /// relationship has an inverse is named already, as the moved entity's inverse removed
    /// (`Hazard.dataLosses`); one without is named here.
    func lostLinks(of delete: DeleteRows) -> [Hazard] {
        guard !delete.isLossy, let staying = delete.staying else { return [] }
        let moved = delete.entities.joined(separator: ", ")
        return staying.referencing.compactMap { referencing, key in
            let owner: (entity: String, relationship: String)
            switch (referencing.kind, referencing.column(named: key.column)?.role) {
            case (.hierarchy, .toOne(let entity, let relationship)?), (.join(let entity, let relationship), .joinTarget?):
                owner = (entity, relationship)
            default:
                return nil
            }
            // A required link is never cleared: it stops the step.
            guard !referencing.kind.isHierarchy || DeleteRows.requiredEntities(of: key.column, in: referencing) == nil,
                  let sourceEntity = pairing.sourceEntity(ofDestination: owner.entity), let entity = source.entity(named: sourceEntity),
                  let sourceName = pairing.sourceRelationship(owner.relationship, of: owner.entity),
                  let relationship = LayoutPairing.declaringEntity(of: sourceName, from: entity, in: source).relationship(named: sourceName),
                  source.inverse(of: relationship) == nil else { return nil }
            let what = referencing.kind.isHierarchy ? "cleared" : "dropped"
            return .dataLoss("\(owner.entity).\(owner.relationship): its links to rows of \(moved) are \(what) (\(moved) moved out of \(delete.table), so the link cannot stay)")
        }
    }
}
