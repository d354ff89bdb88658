import ObjectModel

/// The rows of a continued hierarchy table: rows of removed entities deleted (links to them
/// checked and cleared first), renamed entities renamed, values of properties moved away cleared.
extension LightweightDiff {
    /// Rows of removed entities leave; rows of renamed entities get their new name.
    mutating func entityRows(of table: TableLayout, from sourceTable: TableLayout) {
        var renames: [(from: String, to: String)] = []
        var removed: [String] = []
        for name in sourceTable.entities {
            guard let entity = source.entity(named: name), !entity.isAbstract else { continue }
            guard let destinationName = pairing.destinationEntity(ofSource: name) else {
                removed.append(name)
                continue
            }
            if destinationName != name && pairing.destinationTable(ofEntity: destinationName) == table.name {
                renames.append((name, destinationName))
            }
        }
        if !removed.isEmpty {
            // Before anything is dropped or renamed: every link to those rows, by source names.
            for referencing in pairing.sourceLayout.tables where referencing.kind.isHierarchy {
                for key in referencing.foreignKeys where key.referencedTable == sourceTable.name {
                    if referencing.columns.first(where: { $0.name == key.column })?.isNullable == false {
                        // A required link cannot be cleared: name the rows before anything changes.
                        add(.checkData, DataCheck(
                            table: referencing.name, offending: "true",
                            problem: "rows of \(referencing.name) whose required \(key.column) links to rows of \(removed.joined(separator: ", ")) (removed)",
                            hint: "delete or relink those rows first, or write a mapping model that says what becomes of them",
                            linkingTo: (key.column, sourceTable.name, removed)
                        ))
                    }
                    add(.detachLinks, DetachReferences(table: referencing.name, column: key.column, referencedTable: sourceTable.name, entities: removed, key: key))
                }
            }
            add(.remove, DeleteRows(table: sourceTable.name, entities: removed, isLossy: true))
        }
        if !renames.isEmpty { add(.renameEntities, UpdateEntityNames(table: table.name, renames: renames)) }
    }

    /// A column kept for some entities of the hierarchy loses its values in the rows of the
    /// entities that no longer have the property (it moved down to a sub-entity).
    mutating func clearValues(of table: TableLayout, from sourceTable: TableLayout) {
        let columns = pairing.sourceColumnOf[table.name] ?? [:]
        // Each entity's columns once for the table, not once for each of its columns.
        var destinationStored: [String: Set<String>] = [:], sourceStored: [String: Set<String>] = [:]
        func stored(_ entity: Entity, in version: ModelVersion, columns: PropertyColumns, memo: inout [String: Set<String>]) -> Set<String> {
            if let known = memo[entity.name] { return known }
            let found = Self.storedColumns(of: entity, in: version, columns: columns)
            memo[entity.name] = found
            return found
        }
        for column in table.columns {
            switch column.role {
            case .attribute, .toOne: break
            default: continue
            }
            guard let sourceColumn = columns[column.name] else { continue }
            var cleared: [String] = []
            for name in table.entities {
                guard let entity = destination.entity(named: name), !entity.isAbstract,
                      !stored(entity, in: destination, columns: pairing.destinationColumns, memo: &destinationStored).contains(column.name),
                      let sourceName = pairing.sourceEntity(ofDestination: name), let sourceEntity = source.entity(named: sourceName),
                      pairing.sourceTable(ofEntity: sourceName) == sourceTable.name,
                      stored(sourceEntity, in: source, columns: pairing.sourceColumns, memo: &sourceStored).contains(sourceColumn) else { continue }
                cleared.append(name)
            }
            if !cleared.isEmpty { add(.fill, ClearValues(table: table.name, column: column.name, entities: cleared).describing(column, of: table)) }
        }
    }

    /// The columns an entity's rows use: its stored attributes and to-one columns, inherited ones included.
    static func storedColumns(of entity: Entity, in version: ModelVersion, columns: PropertyColumns) -> Set<String> {
        let names = version.allAttributes(of: entity).map(\.name) + version.allRelationships(of: entity).map(\.name)
        return Set(names.compactMap { columns.column(ofProperty: $0, of: entity, in: version) })
    }
}
