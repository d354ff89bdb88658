import ObjectModel

/// Where the source kept links, read under the names tables and columns have once renamed;
/// and which entities' links a relationship carries.
extension LayoutPairing {
    /// A source column's name once columns are renamed.
    func currentName(ofColumn column: String, inSourceTable table: String) -> String {
        guard let continuation = destinationTable(continuing: table) else { return column }
        return sourceColumnOf[continuation]?.first { $0.value == column }?.key ?? column
    }

    /// The source entities (concrete) whose links a destination relationship of `owner` covers.
    func linkOwners(ofDestination owner: String) -> [String] {
        destination.hierarchy(of: destination.entity(named: owner)!).filter { !$0.isAbstract }.compactMap { sourceEntity(ofDestination: $0.name) }
    }

    /// The source entities (concrete) whose links a source relationship declared by `entity` kept.
    func linkOwners(declaredBy entity: Entity) -> [String] {
        source.hierarchy(of: entity).filter { !$0.isAbstract }.map(\.name)
    }

    /// Whether a source join table can continue as the one of `owner`'s relationship: every
    /// entity whose links it kept is covered by `owner`, or its rows leave the table they are in
    /// (removed, or moved out of the hierarchy), so its links go with them.
    func keepsNoStrayLinks(declaredBy entity: Entity, owner: String) -> Bool {
        let covered = Set(linkOwners(ofDestination: owner))
        return linkOwners(declaredBy: entity).allSatisfy { name in
            guard !covered.contains(name), let successor = destinationEntity(ofSource: name) else { return true }
            return destinationTable(ofEntity: successor) != destinationTable(continuing: sourceTable(ofEntity: name))
        }
    }

    /// Where the source kept the links of a source relationship declared by `entity`.
    func sourceLinks(of relationship: Relationship, declaredBy entity: Entity) -> SourceLinks? {
        switch StoreLayout.storage(of: relationship, in: entity, version: source) {
        case .none:
            return nil
        case .column:
            let column = sourceColumns.column(ofProperty: relationship.name, declaredBy: entity.name)!
            return SourceLinks(
                table: currentName(ofSourceTable: sourceTable(ofEntity: entity.name)), a: "_pk", b: column,
                orderOfB: nil, orderOfA: nil, requiredNotNull: column,
                origins: [.column(table: sourceTable(ofEntity: entity.name), column: column)]
            )
        case .inverseColumn:
            let inverse = source.inverse(of: relationship)!
            let target = source.entity(named: relationship.destination)!
            let column = sourceColumns.column(ofProperty: inverse.name, of: target, in: source)!
            let table = sourceTable(ofEntity: relationship.destination)
            let order = sourceOrderColumn(ofToOne: inverse.name, from: target)
            let keepsOrder = relationship.isOrdered && order.flatMap { sourceLayout.table(named: table)?.column(named: $0) } != nil
            return SourceLinks(
                table: currentName(ofSourceTable: table), a: column, b: "_pk",
                orderOfB: keepsOrder ? order : nil, orderOfA: nil, requiredNotNull: column,
                origins: [.column(table: table, column: column)] + (keepsOrder ? [.column(table: table, column: order!)] : [])
            )
        case .joinTable:
            return joinTableLinks(StoreNaming.joinTableName(entity: entity.name, relationship: relationship.name), ownerSide: relationship)
        case .inverseJoinTable:
            let inverse = source.inverse(of: relationship)!
            let holder = Self.declaringEntity(of: inverse.name, from: source.entity(named: relationship.destination)!, in: source)
            return joinTableLinks(StoreNaming.joinTableName(entity: holder.name, relationship: inverse.name), ownerSide: inverse)?.reversed
        }
    }

    /// Links of a source join table, `a` the owner side.
    fileprivate func joinTableLinks(_ name: String, ownerSide relationship: Relationship) -> SourceLinks? {
        guard let table = sourceLayout.table(named: name) else { return nil }
        let ownerOrder = StoreNaming.orderColumnName(relationship: relationship.name)
        let orders = table.columns.dropFirst(2).map(\.name)
        // Read where the step renamed the table: under the columns' names at that point.
        let current = { currentName(ofColumn: $0, inSourceTable: name) }
        return SourceLinks(
            table: currentName(ofSourceTable: name), a: current(table.columns[0].name), b: current(table.columns[1].name),
            orderOfB: orders.first { $0 == ownerOrder }.map(current), orderOfA: orders.first { $0 != ownerOrder }.map(current), requiredNotNull: nil,
            origins: [.table(name)]
        )
    }
}
