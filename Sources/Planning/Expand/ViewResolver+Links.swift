import ObjectModel

/// Links: join tables, to-ones made to-many, positions added or dropped.
extension ViewResolver {
    // MARK: 3. Join tables

    mutating func joinView(of table: TableLayout) -> OldTableView? {
        guard case .join(let entity, let relationship) = table.kind else { return nil }
        let keys = [table.columns[0].name, table.columns[1].name]
        guard let baseName = pairing.destinationTable(continuing: table.name),
              let base = pairing.destinationLayout.table(named: baseName) else {
            let mapping = pairing.mapping.mapping(forSourceEntity: entity)
            if mapping?.kind == .remove { return nil }
            guard mapping?.relationshipMappings.first(where: { $0.source == relationship })?.kind == .remove else {
                refuse(.expandLinksMoved, "\(entity).\(relationship): its links leave \(table.name) for another table")
                return nil
            }
            // Removed: an empty view, writes discarded.
            let columns = table.columns.map { ViewColumn(name: $0.name, type: $0.type, defaultValue: nil, source: .constant("NULL")) }
            return OldTableView(name: table.name, base: nil, columns: columns, keys: keys, entities: nil, appendedPositions: [], hasIdentity: false)
        }
        let newOfOld = Dictionary((pairing.sourceColumnOf[baseName] ?? [:]).map { ($0.value, $0.key) }, uniquingKeysWith: { a, _ in a })
        guard let owner = newOfOld[keys[0]], let target = newOfOld[keys[1]] else {
            refuse(.expandLinksMoved, "\(entity).\(relationship): the columns of \(table.name) are not continued in \(baseName)")
            return nil
        }
        let columns = table.columns.map { column -> ViewColumn in
            if let new = newOfOld[column.name], let newColumn = base.column(named: new) {
                return ViewColumn(name: column.name, type: column.type, defaultValue: nil, source: .column(new, newType: newColumn.type, required: nil))
            }
            // An order column of a relationship made unordered: counted within its owner.
            guard case .order(_, let ordered) = column.role else {
                return ViewColumn(name: column.name, type: column.type, defaultValue: nil, source: .constant("NULL"))
            }
            let isOwnerSide = ordered == relationship
            return ViewColumn(
                name: column.name, type: column.type, defaultValue: nil,
                source: .position(owner: isOwnerSide ? owner : target, orderBy: isOwnerSide ? target : owner)
            )
        }
        return OldTableView(
            name: table.name, base: baseName, columns: columns, keys: keys, entities: nil,
            appendedPositions: appendedPositions(in: base, written: [owner, target]), hasIdentity: false
        )
    }

    /// Order columns of `table` that no old column continues, whose owner the old version
    /// writes: its links go last among their owner's.
    func appendedPositions(in table: TableLayout, written: Set<String>) -> [AppendedPosition] {
        let continued = Set((pairing.sourceColumnOf[table.name] ?? [:]).keys)
        return table.columns.compactMap { column in
            guard case .order(let entity, let relationship) = column.role, !continued.contains(column.name) else { return nil }
            let owner: String?
            switch table.kind {
            case .join(_, let owning):
                owner = relationship == owning ? table.columns[0].name : table.columns[1].name
            case .hierarchy:
                owner = orderedOwnerColumn(entity: entity, relationship: relationship)
            }
            guard let owner, written.contains(owner) else { return nil }
            return AppendedPosition(column: column.name, owner: owner)
        }
    }

    /// The to-one column beside which a destination one-to-many keeps its order.
    private func orderedOwnerColumn(entity: String, relationship: String) -> String? {
        guard let owner = destination.entity(named: entity), let ordered = destination.allRelationships(of: owner).first(where: { $0.name == relationship }),
              let inverse = destination.inverse(of: ordered), let target = destination.entity(named: ordered.destination) else { return nil }
        return pairing.destinationColumns.column(ofProperty: inverse.name, of: target, in: destination)
    }

    // MARK: Columns replaced by links elsewhere

    /// An old to-one column: NULL when the relationship is removed, the first link when it was
    /// made to-many into a join table; refused otherwise.
    mutating func toOneReplacement(entity: String, relationship: String, column: String) -> ViewColumn.Source {
        guard let mapping = pairing.mapping.mapping(forSourceEntity: entity),
              let property = mapping.relationshipMappings.first(where: { $0.source == relationship }),
              mapping.kind != .remove, property.kind != .remove else { return .constant("NULL") }
        guard property.changes.contains(.toOneToToMany), let links = joinLinks(of: property.destination!, of: mapping.destinationEntity!) else {
            refuse(.expandLinksMoved, "\(entity).\(relationship): its links leave \(column) for a place the views cannot translate")
            return .constant("NULL")
        }
        return .firstLink(links)
    }

    /// Where a destination to-many of `entity` keeps its links in a join table, the entity's
    /// side as `owner`.
    private func joinLinks(of relationship: String, of entity: String) -> JoinLinks? {
        guard let owner = destination.entity(named: entity) else { return nil }
        let declaring = LayoutPairing.declaringEntity(of: relationship, from: owner, in: destination)
        guard let stored = declaring.relationship(named: relationship) else { return nil }
        let name: String
        let isOwnerSide: Bool
        switch destination.storage(of: stored, in: declaring) {
        case .joinTable:
            name = StoreNaming.joinTableName(entity: declaring.name, relationship: stored.name)
            isOwnerSide = true
        case .inverseJoinTable:
            guard let inverse = destination.inverse(of: stored), let target = destination.entity(named: stored.destination) else { return nil }
            let holder = LayoutPairing.declaringEntity(of: inverse.name, from: target, in: destination)
            name = StoreNaming.joinTableName(entity: holder.name, relationship: inverse.name)
            isOwnerSide = false
        default:
            return nil
        }
        guard let table = pairing.destinationLayout.table(named: name) else { return nil }
        let orders = table.columns.dropFirst(2).map { column -> (name: String, isOwnerSide: Bool) in
            guard case .order(_, let ordered) = column.role else { return (column.name, false) }
            return (column.name, ordered == stored.name)
        }
        return JoinLinks(
            table: name, owner: table.columns[isOwnerSide ? 0 : 1].name, target: table.columns[isOwnerSide ? 1 : 0].name,
            order: orders.first { $0.isOwnerSide }?.name, inverseOrder: orders.first { !$0.isOwnerSide }?.name
        )
    }

    /// An old order column beside a to-one (an ordered one-to-many): NULL when the to-many is
    /// removed, a count when it was made unordered; refused otherwise.
    mutating func positionReplacement(entity: String, relationship: String, column: String, newOfOld: [String: String]) -> ViewColumn.Source {
        guard let mapping = pairing.mapping.mapping(forSourceEntity: entity),
              let property = mapping.relationshipMappings.first(where: { $0.source == relationship }),
              mapping.kind != .remove, property.kind != .remove else { return .constant("NULL") }
        if property.changes.contains(.orderedChanged(isOrdered: false)),
           let owner = source.entity(named: entity),
           let ordered = source.allRelationships(of: owner).first(where: { $0.name == relationship }),
           let inverse = source.inverse(of: ordered), let target = source.entity(named: ordered.destination),
           let toOne = pairing.sourceColumns.column(ofProperty: inverse.name, of: target, in: source),
           let newToOne = newOfOld[toOne] {
            return .position(owner: newToOne, orderBy: "_pk")
        }
        refuse(.expandLinksMoved, "\(entity).\(relationship): its positions leave \(column) for a place the views cannot translate")
        return .constant("NULL")
    }
}
