import ObjectModel
import SQLBuilding

/// Decides, for every table of the old version's layout, the view that serves it over the new
/// tables, from a `LayoutPairing` (which new table and column continues which old one) and the
/// inferred mapping; and every change no view can serve (`ExpandRefusal`).
///
/// 1. Changes refused whatever the tables look like (`mappingRefusals`).
/// 2. A hierarchy table continued by a new one: each old column read from the new column that
///    continues it, or from what replaced it (a join table, a count, a constant); rows of
///    entities the old version does not know left out.
/// 3. A join table: continued (renamed columns, positions added or dropped), or empty when
///    the relationship is removed.
struct ViewResolver {
    let pairing: LayoutPairing
    /// Removed columns still in their table until `complete` (`"table.column"`).
    let keptColumns: Set<String>
    /// Dropped tables still in the store until `complete` (old names, which they keep).
    let keptTables: Set<String>
    private(set) var views: [OldTableView] = []
    var refusals: [ExpandRefusal] = []

    var source: ModelVersion { pairing.source }
    var destination: ModelVersion { pairing.destination }

    init(pairing: LayoutPairing, keptColumns: Set<String> = [], keptTables: Set<String> = []) {
        self.pairing = pairing
        self.keptColumns = keptColumns
        self.keptTables = keptTables
        mappingRefusals()
        for table in pairing.sourceLayout.tables {
            let view: OldTableView? = switch table.kind {
            case _ where keptTables.contains(table.name): keptTableView(of: table)
            case .hierarchy: hierarchyView(of: table)
            case .join: joinView(of: table)
            }
            if let view { views.append(view) }
        }
    }

    mutating func refuse(_ code: ExpandRefusal.Code, _ message: String) {
        let refusal = ExpandRefusal(code, message)
        if !refusals.contains(refusal) { refusals.append(refusal) }
    }

    /// The concrete entities of a destination table.
    func concreteEntities(of table: TableLayout) -> [String] {
        table.entities.filter { destination.entity(named: $0)?.isAbstract == false }
    }

    /// A table kept until `complete` (a removed entity's, a removed many-to-many's): read and
    /// written as it is, under its own name; PostgreSQL writes through the view itself.
    private func keptTableView(of table: TableLayout) -> OldTableView {
        let columns = table.columns.map {
            ViewColumn(name: $0.name, type: $0.type, defaultValue: nil, source: .column($0.name, newType: $0.type, required: nil))
        }
        let keys = table.kind.isHierarchy ? ["_pk"] : [table.columns[0].name, table.columns[1].name]
        return OldTableView(
            name: table.name, base: table.name, columns: columns, keys: keys, entities: nil,
            appendedPositions: [], hasIdentity: table.kind.isHierarchy
        )
    }

    // MARK: 2. Hierarchy tables

    private mutating func hierarchyView(of table: TableLayout) -> OldTableView? {
        guard let baseName = pairing.destinationTable(continuing: table.name),
              let base = pairing.destinationLayout.table(named: baseName) else { return nil }
        let newOfOld = Dictionary((pairing.sourceColumnOf[baseName] ?? [:]).map { ($0.value, $0.key) }, uniquingKeysWith: { a, _ in a })
        for copy in pairing.copiesOf[baseName] ?? [] {
            refuse(.expandColumnsRegrouped, "\(base.name).\(copy.column) holds the values of \(table.name).\(copy.source) for \(copy.entities.joined(separator: ", ")): one old column would read several new ones by entity")
        }
        // Entities whose rows stay in this table, under their new names.
        var known: [String] = []
        var renames: [EntityRename] = []
        for name in table.entities where source.entity(named: name)?.isAbstract == false {
            guard let new = pairing.destinationEntity(ofSource: name), pairing.destinationTable(ofEntity: new) == baseName else { continue }
            known.append(new)
            if new != name { renames.append(EntityRename(old: name, new: new)) }
        }
        let concrete = concreteEntities(of: base)
        var columns: [ViewColumn] = []
        for column in table.columns {
            let resolved: ViewColumn.Source
            if let new = newOfOld[column.name], let newColumn = base.column(named: new) {
                switch column.role {
                case .entityName: resolved = .entityName(renames: renames)
                default: resolved = .column(new, newType: newColumn.type, required: requiredDefault(of: newColumn, in: base))
                }
            } else {
                resolved = replacement(of: column, in: table, newOfOld: newOfOld)
            }
            columns.append(ViewColumn(name: column.name, type: column.type, defaultValue: column.defaultExpression, source: resolved))
        }
        let written = Set(columns.compactMap(\.writtenColumn))
        return OldTableView(
            name: table.name, base: baseName, columns: columns, keys: ["_pk"],
            entities: Set(concrete).isSubset(of: known) ? nil : concrete.filter(known.contains),
            appendedPositions: appendedPositions(in: base, written: written), hasIdentity: true
        )
    }

    /// An old column no new column continues: what holds its values now, or a refusal.
    private mutating func replacement(of column: ColumnLayout, in table: TableLayout, newOfOld: [String: String]) -> ViewColumn.Source {
        let unserved = ViewColumn.Source.constant("NULL")
        // Rows that left the table are refused once, for their entity (`mappingRefusals`).
        if let owner = column.role.entity, let new = pairing.destinationEntity(ofSource: owner),
           pairing.destinationTable(ofEntity: new) != pairing.destinationTable(continuing: table.name) {
            return unserved
        }
        // Removed, its drop deferred (`ExpandDeferral`): the column itself, read and written
        // until `complete`.
        if let base = pairing.destinationTable(continuing: table.name), keptColumns.contains("\(base).\(column.name)") {
            return .column(column.name, newType: column.type, required: nil)
        }
        switch column.role {
        case .attribute(let entity, let name):
            let mapping = pairing.mapping.mapping(forSourceEntity: entity)
            let property = mapping?.attributeMappings.first { $0.source == name }
            guard mapping?.kind == .remove || property?.kind == .remove else {
                if pairing.copiesOf.values.joined().contains(where: { $0.source == column.name }) { return unserved }
                refuse(.expandColumnsRegrouped, "\(entity).\(name): kept, but no new column continues \(table.name).\(column.name)")
                return unserved
            }
            // Removed: the old default, or NULL (a required one without default is refused).
            return .constant(column.defaultExpression ?? "NULL")
        case .toOne(let entity, let name):
            return toOneReplacement(entity: entity, relationship: name, column: "\(table.name).\(column.name)")
        case .order(let entity, let name):
            return positionReplacement(entity: entity, relationship: name, column: "\(table.name).\(column.name)", newOfOld: newOfOld)
        case .primaryKey, .entityName, .joinOwner, .joinTarget:
            refuse(.expandLinksMoved, "\(table.name).\(column.name): no new column continues it")
            return unserved
        }
    }

    /// A column made required with a default: NULLs the old version writes take the default,
    /// for the entities that require it (all rows when every concrete entity does).
    private func requiredDefault(of column: ColumnLayout, in table: TableLayout) -> RequiredDefault? {
        guard case .attribute = column.role else { return nil }
        var value: SQL?
        var entities: [String] = []
        for name in concreteEntities(of: table) {
            guard let entity = destination.entity(named: name), let mapping = pairing.mapping.mapping(forDestinationEntity: name) else { continue }
            for property in mapping.attributeMappings {
                guard let new = property.destination,
                      pairing.destinationColumns.column(ofProperty: new, of: entity, in: destination) == column.name,
                      let attribute = destination.allAttributes(of: entity).first(where: { $0.name == new }) else { continue }
                for case .madeRequired(let backfill?) in property.changes {
                    guard let parsed = DefaultValue.parse(backfill, as: attribute.type) else { continue }
                    value = ColumnTypes.defaultExpression(parsed, columnType: column.type)
                    entities.append(name)
                }
            }
        }
        guard let value else { return nil }
        return RequiredDefault(value: value, entities: entities == concreteEntities(of: table) ? nil : entities)
    }
}

extension ColumnLayout.Role {
    /// The entity declaring the column's attribute or to-one, whose rows hold it.
    var entity: String? {
        switch self {
        case .attribute(let entity, _), .toOne(let entity, _): entity
        case .order, .primaryKey, .entityName, .joinOwner, .joinTarget: nil
        }
    }
}
