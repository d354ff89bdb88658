import ObjectModel

/// Which tables and columns of the store, laid out for the source version, continue as which
/// tables and columns of the destination's layout: the same physical object, perhaps under
/// another name. Everything else is added, filled from elsewhere, or dropped.
///
/// 1. A source hierarchy table continues as the table of the hierarchy that receives its
///    shallowest kept entity (its root, unless the root was removed). Entities of it that land
///    in another hierarchy move their rows there.
/// 2. A join table continues when the relationship that owns it still owns a join table, for
///    the links of all the entities the source kept there (else each new one copies its own).
/// 3. In a continued table, a destination column continues the source column of the property
///    the mapping pairs with it, as seen from any entity of the table. Where the entities of one
///    column read several source columns (sibling declarations merged or split), the one with
///    the same name, else the same type, else the most entities, continues; the others are
///    copied in for their entities' rows.
struct LayoutPairing {
    let source: ModelVersion
    let destination: ModelVersion
    let mapping: InferredMapping
    let sourceLayout: StoreLayout
    let destinationLayout: StoreLayout
    let sourceColumns: PropertyColumns
    let destinationColumns: PropertyColumns

    /// Destination table -> the source table it continues.
    private(set) var sourceTableOf: [String: String] = [:]
    /// Destination table -> destination column -> the source column it continues.
    private(set) var sourceColumnOf: [String: [String: String]] = [:]
    /// Destination table -> values copied into its columns from source columns nothing continues
    /// as that column, for the rows of some entities.
    private(set) var copiesOf: [String: [ColumnCopy]] = [:]
    /// What this release cannot do in place, one reason each.
    private(set) var problems: [String] = []

    init(mapping: InferredMapping, source: ModelVersion, destination: ModelVersion, schema: String) {
        self.source = source
        self.destination = destination
        self.mapping = mapping
        sourceLayout = StoreLayout(version: source, schema: schema)
        destinationLayout = StoreLayout(version: destination, schema: schema)
        sourceColumns = source.propertyColumns
        destinationColumns = destination.propertyColumns
        pairHierarchyTables()
        pairJoinTables()
    }

    // MARK: Lookups

    func destinationEntity(ofSource name: String) -> String? {
        mapping.mapping(forSourceEntity: name)?.destinationEntity
    }

    func sourceEntity(ofDestination name: String) -> String? {
        mapping.mapping(forDestinationEntity: name)?.sourceEntity
    }

    /// The source name of a destination entity's stored attribute (own or inherited).
    func sourceAttribute(_ name: String, of entity: String) -> String? {
        mapping.mapping(forDestinationEntity: entity)?.attributeMappings.first { $0.destination == name }?.source
    }

    func sourceRelationship(_ name: String, of entity: String) -> String? {
        mapping.mapping(forDestinationEntity: entity)?.relationshipMappings.first { $0.destination == name }?.source
    }

    /// The table a source entity's rows are in.
    func sourceTable(ofEntity name: String) -> String {
        StoreNaming.tableName(entity: source.root(of: source.entity(named: name)!).name)
    }

    func destinationTable(ofEntity name: String) -> String {
        StoreNaming.tableName(entity: destination.root(of: destination.entity(named: name)!).name)
    }

    /// The destination table that continues a source table.
    func destinationTable(continuing sourceTable: String) -> String? {
        sourceTableOf.first { $0.value == sourceTable }?.key
    }

    /// The name a source table has once tables are renamed: its continuation's, else its own.
    func currentName(ofSourceTable table: String) -> String {
        destinationTable(continuing: table) ?? table
    }

    /// The ancestor (or the entity itself) that declares a relationship, in the source.
    static func declaringEntity(of relationship: String, from entity: Entity, in version: ModelVersion) -> Entity {
        version.ancestry(of: entity).last { $0.relationship(named: relationship) != nil } ?? entity
    }

    // MARK: 1. Hierarchy tables

    private mutating func pairHierarchyTables() {
        for table in sourceLayout.tables {
            guard case .hierarchy = table.kind else { continue }
            let members = table.entities.enumerated()
                .map { (depth: source.ancestry(of: source.entity(named: $0.element)!).count, order: $0.offset, name: $0.element) }
                .sorted { ($0.depth, $0.order) < ($1.depth, $1.order) }
            guard let kept = members.first(where: { destinationEntity(ofSource: $0.name) != nil }),
                  let successor = destinationEntity(ofSource: kept.name) else { continue }
            let destinationName = destinationTable(ofEntity: successor)
            if let other = sourceTableOf[destinationName] {
                problems.append("tables \(other) and \(table.name) would both become \(destinationName)")
                continue
            }
            sourceTableOf[destinationName] = table.name
        }
        for table in destinationLayout.tables {
            guard case .hierarchy = table.kind, let sourceName = sourceTableOf[table.name],
                  let sourceTable = sourceLayout.table(named: sourceName) else { continue }
            pairColumns(of: table, with: sourceTable)
        }
    }

    private mutating func pairColumns(of table: TableLayout, with sourceTable: TableLayout) {
        let found = columnSources(of: table, in: sourceTable)
        sourceColumnOf[table.name] = found.columns
        copiesOf[table.name] = found.copies
        problems += found.problems
    }

    /// Destination column -> the source column holding its values, for the rows of `table`'s
    /// entities that come from `sourceTable`; and the values copied in from other columns.
    func columnSources(of table: TableLayout, in sourceTable: TableLayout) -> (columns: [String: String], copies: [ColumnCopy], problems: [String]) {
        var columns: [String: String] = [:]
        var problems: [String] = []
        // Source column -> destination entities whose values it holds, per destination column.
        var candidates: [(column: ColumnLayout, sources: [(source: String, entities: [String])])] = []
        let propertySources = propertySources(in: table, from: sourceTable.name)
        for column in table.columns {
            var found: [(source: String, entity: String)] = []
            switch column.role {
            case .primaryKey, .entityName:
                found = [(column.name, "")]
            case .attribute, .toOne:
                found = propertySources[column.name] ?? []
            case .order(let owner, let name):
                if let source = sourceOrderColumn(owner: owner, relationship: name, in: sourceTable.name) {
                    found = [(source, "")]
                }
            case .joinOwner, .joinTarget:
                break
            }
            var sources: [(source: String, entities: [String])] = []
            for (source, entity) in found where sourceTable.column(named: source) != nil {
                if let index = sources.firstIndex(where: { $0.source == source }) {
                    if !sources[index].entities.contains(entity) { sources[index].entities.append(entity) }
                } else {
                    sources.append((source, [entity]))
                }
            }
            if !sources.isEmpty { candidates.append((column, sources)) }
        }
        // Each source column continues as at most one destination column: the closest match
        // first (same name, same type, most entities); every other pairing becomes a copy.
        let pairs = candidates.flatMap { candidate in candidate.sources.map { (column: candidate.column, source: $0.source, entities: $0.entities) } }
        let ranked = pairs.map { p in
            (pair: p, rank: (p.source == p.column.name ? 0 : 1, sourceTable.column(named: p.source)?.type == p.column.type ? 0 : 1, -p.entities.count, p.column.name, p.source))
        }.sorted { $0.rank < $1.rank }.map(\.pair)
        var copies: [ColumnCopy] = []
        for pair in ranked {
            if columns[pair.column.name] == nil && !columns.values.contains(pair.source) {
                columns[pair.column.name] = pair.source
            } else if pair.entities.contains("") || columns[pair.column.name] == pair.source {
                if columns[pair.column.name] == pair.source { continue }
                problems.append("source column \(sourceTable.name).\(pair.source) would continue as both \(pair.column.name) and another column")
            } else {
                copies.append(ColumnCopy(column: pair.column.name, type: pair.column.type, source: pair.source, entities: pair.entities))
            }
        }
        return (columns, copies.sorted { ($0.column, $0.source) < ($1.column, $1.source) }, problems)
    }

    /// Destination column -> for each destination entity of `table` storing a property in it:
    /// the source column that held the property's values, when its source entity's rows are in
    /// `sourceTable`; in the order of the entities, then of their attributes and relationships.
    private func propertySources(in table: TableLayout, from sourceTable: String) -> [String: [(source: String, entity: String)]] {
        var found: [String: [(source: String, entity: String)]] = [:]
        for name in table.entities {
            guard let entity = destination.entity(named: name), let sourceName = sourceEntity(ofDestination: name),
                  self.sourceTable(ofEntity: sourceName) == sourceTable, let holder = source.entity(named: sourceName) else { continue }
            for attribute in destination.allAttributes(of: entity) {
                if let column = destinationColumns.column(ofProperty: attribute.name, of: entity, in: destination),
                   let sourceAttribute = sourceAttribute(attribute.name, of: name),
                   let sourceColumn = sourceColumns.column(ofProperty: sourceAttribute, of: holder, in: source) {
                    found[column, default: []].append((sourceColumn, name))
                }
            }
            for relationship in destination.allRelationships(of: entity) {
                if let column = destinationColumns.column(ofProperty: relationship.name, of: entity, in: destination),
                   let sourceRelationship = sourceRelationship(relationship.name, of: name),
                   let sourceColumn = sourceColumns.column(ofProperty: sourceRelationship, of: holder, in: source) {
                    found[column, default: []].append((sourceColumn, name))
                }
            }
        }
        return found
    }

    /// The source order column of an ordered one-to-many that is still stored beside its
    /// inverse's column in `table`.
    private func sourceOrderColumn(owner: String, relationship: String, in table: String) -> String? {
        guard let sourceOwner = sourceEntity(ofDestination: owner), let name = sourceRelationship(relationship, of: owner),
              let entity = source.entity(named: sourceOwner) else { return nil }
        let declaring = Self.declaringEntity(of: name, from: entity, in: source)
        guard let stored = declaring.relationship(named: name), stored.isOrdered,
              StoreLayout.storage(of: stored, in: declaring, version: source) == .inverseColumn,
              let inverse = source.inverse(of: stored), sourceTable(ofEntity: stored.destination) == table,
              let target = source.entity(named: stored.destination) else { return nil }
        return sourceOrderColumn(ofToOne: inverse.name, from: target)
    }

    /// The order column beside a source to-one's column, as seen from `entity`.
    func sourceOrderColumn(ofToOne name: String, from entity: Entity) -> String? {
        sourceColumns.orderColumn(ofToOne: name, declaredBy: Self.declaringEntity(of: name, from: entity, in: source).name)
    }

    // MARK: 2. Join tables

    private mutating func pairJoinTables() {
        for table in destinationLayout.tables {
            guard case .join(let owner, let name) = table.kind,
                  let sourceOwner = sourceEntity(ofDestination: owner), let relationship = sourceRelationship(name, of: owner),
                  let entity = source.entity(named: sourceOwner) else { continue }
            let declaring = Self.declaringEntity(of: relationship, from: entity, in: source)
            guard let stored = declaring.relationship(named: relationship),
                  StoreLayout.storage(of: stored, in: declaring, version: source) == .joinTable,
                  let sourceTable = sourceLayout.table(named: StoreNaming.joinTableName(entity: declaring.name, relationship: relationship)),
                  destinationTable(continuing: sourceTable.name) == nil,
                  keepsNoStrayLinks(declaredBy: declaring, owner: owner) else { continue }
            sourceTableOf[table.name] = sourceTable.name
            // Owner, target, then each side's order column where both versions keep one.
            var columns = [table.columns[0].name: sourceTable.columns[0].name, table.columns[1].name: sourceTable.columns[1].name]
            let ownerOrder = StoreNaming.orderColumnName(relationship: relationship)
            for column in table.columns.dropFirst(2) {
                guard case .order(_, let orderedName) = column.role else { continue }
                let isOwnerSide = orderedName == name
                let match = sourceTable.columns.dropFirst(2).first { ($0.name == ownerOrder) == isOwnerSide }
                if let match { columns[column.name] = match.name }
            }
            sourceColumnOf[table.name] = columns
        }
    }
}

/// Values of one source column copied into a destination column for the rows of some
/// entities (destination names): a column siblings shared split apart, or merged into one.
struct ColumnCopy: Sendable, Hashable {
    var column: String
    var type: String
    var source: String
    var entities: [String]
}
