import ObjectModel

/// Tables the source store lacks, and what fills them: rows of entities moved out of their
/// hierarchy, links the source kept elsewhere.
extension LightweightDiff {
    mutating func added(_ table: TableLayout) {
        add(.add, AddTable(table: table))
        var hasRows = false
        switch table.kind {
        case .hierarchy:
            hasRows = copyMovedRows(into: table)
        case .join(let owner, let name):
            hasRows = fillLinks(of: table, owner: owner, relationship: name)
        }
        for foreignKey in table.foreignKeys {
            add(.tighten, AddForeignKey(table: table.name, foreignKey: foreignKey, scansRows: hasRows))
        }
        for unique in table.uniqueConstraints {
            add(.tighten, AddUnique(table: table.name, unique: unique, scansRows: hasRows))
        }
        for index in table.indexes {
            add(.tighten, CreateIndex(table: table.name, index: index, scansRows: hasRows))
        }
    }

    /// Entities moved out of their hierarchy: their rows are copied, `_pk` kept, then deleted
    /// from the old table once everything that reads them ran, the links to them cleared first
    /// (`MovedLinks`).
    private mutating func copyMovedRows(into table: TableLayout) -> Bool {
        var bySourceTable: [String: [String]] = [:]
        for name in table.entities {
            guard let sourceName = pairing.sourceEntity(ofDestination: name), source.entity(named: sourceName)?.isAbstract == false else { continue }
            bySourceTable[pairing.sourceTable(ofEntity: sourceName), default: []].append(sourceName)
        }
        guard let (sourceName, entities) = bySourceTable.first, let sourceTable = pairing.sourceLayout.table(named: sourceName) else { return false }
        if bySourceTable.count > 1 {
            problems.append("table \(table.name) would receive rows of several source tables (\(bySourceTable.keys.sorted().joined(separator: ", ")))")
            return false
        }
        let (columns, copies, found) = pairing.columnSources(of: table, in: sourceTable)
        problems += found
        for copy in copies {
            problems.append("rows moving into \(table.name) would fill \(copy.column) from several source columns (\(copy.source) among them); not inferred in place")
        }
        var copied: [(destination: String, source: String)] = [("_pk", "_pk")]
        for column in table.columns where column.name != "_pk" && column.name != "_entity" {
            guard let sourceColumn = columns[column.name] else { continue }
            copied.append((column.name, pairing.currentName(ofColumn: sourceColumn, inSourceTable: sourceName)))
            consumedColumns.insert(ColumnKey(table: sourceName, column: sourceColumn))
        }
        let current = pairing.currentName(ofSourceTable: sourceName)
        add(.fill, CopyRows(fromTable: current, toTable: table.name, columns: copied, entities: entities.map { ($0, pairing.destinationEntity(ofSource: $0)!) }))
        add(.fill, ResetIdentity(table: table.name))
        let staying = pairing.destinationTable(continuing: sourceName).flatMap { name in
            pairing.destinationLayout.table(named: name).map { layout in
                (layout, pairing.destinationLayout.tables.flatMap { table in table.foreignKeys.filter { $0.referencedTable == name }.map { (table, $0) } })
            }
        }
        var delete = DeleteRows(table: current, entities: entities, isLossy: false, staying: staying)
        delete.lostLinks = lostLinks(of: delete)
        checkRequiredLinks(of: delete, movingOutOf: sourceName)
        add(.dropMoved, delete)
        return true
    }

    /// A source entity's name in `_entity` once entities are renamed: the destination name for
    /// rows that stay in their table, the source name for rows that are moving out.
    private func currentName(ofEntity name: String) -> String {
        guard let destinationName = pairing.destinationEntity(ofSource: name),
              pairing.destinationTable(ofEntity: destinationName) == pairing.destinationTable(continuing: pairing.sourceTable(ofEntity: name)) else { return name }
        return destinationName
    }

    /// A new join table gets the links the source kept elsewhere: a to-one column (a to-one
    /// made to-many), or a join table owned by the other side or by a parent.
    private mutating func fillLinks(of table: TableLayout, owner: String, relationship name: String) -> Bool {
        var links: SourceLinks?
        if let sourceOwner = pairing.sourceEntity(ofDestination: owner), let sourceName = pairing.sourceRelationship(name, of: owner),
           let entity = source.entity(named: sourceOwner) {
            let declaring = LayoutPairing.declaringEntity(of: sourceName, from: entity, in: source)
            links = pairing.sourceLinks(of: declaring.relationship(named: sourceName)!, declaredBy: declaring)
            // The source kept links of more entities than the destination's owner covers.
            let covered = pairing.linkOwners(ofDestination: owner)
            let kept = pairing.linkOwners(declaredBy: declaring)
            if links != nil, Set(kept) != Set(covered) {
                links!.ownerFilter = SourceLinks.OwnerFilter(
                    table: pairing.currentName(ofSourceTable: pairing.sourceTable(ofEntity: declaring.name)),
                    entities: covered.map(currentName(ofEntity:))
                )
            }
        } else if let relationship = destination.entity(named: owner)?.relationship(named: name),
                  let inverse = destination.inverse(of: relationship), let target = destination.entity(named: relationship.destination) {
            let holder = LayoutPairing.declaringEntity(of: inverse.name, from: target, in: destination)
            if let sourceHolder = pairing.sourceEntity(ofDestination: holder.name), let sourceName = pairing.sourceRelationship(inverse.name, of: holder.name),
               let entity = source.entity(named: sourceHolder) {
                let declaring = LayoutPairing.declaringEntity(of: sourceName, from: entity, in: source)
                links = pairing.sourceLinks(of: declaring.relationship(named: sourceName)!, declaredBy: declaring)?.reversed
            }
        }
        guard let links else { return false }
        consume(links)
        let orderColumns: [(column: String, side: FillJoinTable.Side)] = table.columns.dropFirst(2).compactMap { column in
            guard case .order(_, let ordered) = column.role else { return nil }
            return (column.name, ordered == name ? .target : .owner)
        }
        add(.fill, FillJoinTable(table: table.name, ownerColumn: table.columns[0].name, targetColumn: table.columns[1].name, orderColumns: orderColumns, links: links,
            referencedTables: Dictionary(table.foreignKeys.map { ($0.column, $0.referencedTable) }, uniquingKeysWith: { first, _ in first })
        ))
        return true
    }

    /// What reading the links uses up is dropped after the copies, without loss.
    mutating func consume(_ links: SourceLinks) {
        for origin in links.origins {
            switch origin {
            case .column(let table, let column): consumedColumns.insert(ColumnKey(table: table, column: column))
            case .table(let table): consumedTables.insert(table)
            }
        }
    }
}
