import ObjectModel
import SQLBuilding

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
