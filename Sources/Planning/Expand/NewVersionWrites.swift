import Mapping
import ObjectModel
import SQLBuilding

/// The new version written through its views (`NewVersionViews`) while a heavyweight step's
/// `apply --expand` waits for `complete`, when a reverse mapping model (new -> old) is given
/// (docs/rolling-deploys-heavyweight.md, "A writable new version"). The old version's tables
/// stay the truth: a write through a view of the new version is translated by the reverse
/// mapping into the store's tables (where the change log sees it, and the rounds map it
/// forward again), and is written as given into the staging table too, so the writer reads
/// it back at once.
///
/// A table is written through only when a row keeps its key both ways: every entity mapping
/// of the step filling it keeps its source rows' keys (no filter, no policy, one source
/// table), and every entity stored there has one reverse entity mapping, set-based, without
/// a filter, reading only the row itself, into the table those rows come from. Links are
/// then keys shared by both versions; so are the pairs of a join table whose two sides keep
/// their keys (`joinWrite`). Every other table stays read-only, with why. Pure.
public struct NewVersionWrites: Sendable, Hashable {
    /// The reverse mapping model's file.
    public var file: String
    /// The new version's tables written through, by name.
    var written: [String: TableWrite] = [:]
    /// Its join tables written through, by name.
    var joins: [String: JoinWrite] = [:]
    /// The new version's tables still read-only, each with why.
    public var readOnly: [String: String] = [:]

    public var writtenTables: [String] { (Array(written.keys) + joins.keys).sorted() }

    struct TableWrite: Sendable, Hashable {
        /// The store's table (the old version's) holding the same rows, by key.
        var oldTable: String
        /// The entity a row written without `_entity` is: the table's only concrete one.
        var onlyEntity: String?
        var entities: [EntityWrite]
    }

    /// A row of `newEntity` is a row of `oldEntity` in the old table, each column computed
    /// from the written row (`s`).
    struct EntityWrite: Sendable, Hashable {
        var newEntity: String
        var oldEntity: String
        var columns: [String]
        var values: [SQL]
    }

    /// The writes of `new`'s tables (`newLayout`) through `reverse`, for the step whose entity
    /// mappings are `forward`.
    /// A reverse mapping model that does not resolve is refused, each reason named
    /// (`HeavyweightRefusal`).
    static func planned(
        reverse: MappingModel, forward: [ResolvedEntityMapping], old: ModelVersion, new: ModelVersion, newLayout: StoreLayout
    ) throws(HeavyweightRefusal) -> NewVersionWrites {
        var writes = NewVersionWrites(file: reverse.file)
        let mappings = try HeavyweightMigration.resolved(reverse, from: new, to: old)
        let filling = Dictionary(grouping: forward, by: \.destinationTable)
        /// The old table whose keys `table`'s rows keep, or nil.
        func keptFrom(_ table: String) -> String? {
            guard let group = filling[table], let first = group.first,
                  group.allSatisfy({ $0.keepsSourceKeys && $0.filter == nil && $0.policy == nil && $0.sourceTable == first.sourceTable }) else { return nil }
            return first.sourceTable
        }
        for table in newLayout.tables {
            guard case .hierarchy = table.kind else {
                do {
                    writes.joins[table.name] = try joinWrite(table, among: mappings, new: new, keptFrom: keptFrom)
                } catch {
                    writes.readOnly[table.name] = error.reason
                }
                continue
            }
            guard let oldTable = keptFrom(table.name) else {
                writes.readOnly[table.name] = "its rows do not keep their keys in the step (an entity mapping into it with a filter, a policy, or rows from several tables)"
                continue
            }
            let concrete = table.entities.filter { new.entity(named: $0)?.isAbstract == false }
            var entities: [EntityWrite] = []
            var why: [String] = []
            for entity in concrete {
                do {
                    entities.append(try entityWrite(entity, table: table.name, oldTable: oldTable, among: mappings, forward: forward, old: old, new: new, keptFrom: keptFrom))
                } catch {
                    why.append(error.reason)
                }
            }
            if why.isEmpty, !entities.isEmpty {
                writes.written[table.name] = TableWrite(oldTable: oldTable, onlyEntity: concrete.count == 1 ? concrete[0] : nil, entities: entities)
            } else {
                writes.readOnly[table.name] = why.isEmpty ? "no concrete entity is stored there" : why.joined(separator: "; ")
            }
        }
        return writes
    }

    struct NotWritten: Error {
        var reason: String
    }

    private static func entityWrite(
        _ entity: String, table: String, oldTable: String, among mappings: [ResolvedEntityMapping], forward: [ResolvedEntityMapping],
        old: ModelVersion, new: ModelVersion, keptFrom: (String) -> String?
    ) throws(NotWritten) -> EntityWrite {
        let readers = mappings.filter { $0.sourceEntities.contains(entity) }
        guard readers.count == 1, let reverse = readers.first else {
            throw NotWritten(reason: readers.isEmpty ? "no reverse entity mapping reads \(entity)" : "several reverse entity mappings read \(entity)")
        }
        let name = "reverse entity mapping \(reverse.name)"
        if reverse.policy != nil || reverse.needsSwift { throw NotWritten(reason: "\(name) needs a custom policy or Swift") }
        if reverse.filter != nil { throw NotWritten(reason: "\(name) has a filter (a row it passes over would be lost)") }
        guard reverse.destinationTable == oldTable,
              forward.contains(where: { $0.destinationEntity == entity && $0.sourceEntities.contains(reverse.destinationEntity) }) else {
            throw NotWritten(reason: "\(name) makes \(reverse.destinationEntity) rows, which the step does not map back to \(entity)")
        }
        if let attribute = reverse.attributes.first(where: { !$0.expression.joins.isEmpty }) {
            throw NotWritten(reason: "\(name): the value of \(attribute.column) reads through a relationship")
        }
        if let link = reverse.toManyLinks.first(where: { if case .inverseColumn = $0.storage { return true }; return false }) {
            throw NotWritten(reason: "\(name): \(link.relationship) is kept in the linked row's column, written from this side")
        }
        let compiler = SQLExpressionCompiler(sourceAlias: SourceJoins.sourceAlias)
        var columns = reverse.attributes.map(\.column)
        var values = reverse.attributes.map { compiler.compile($0.expression)! }
        let newColumns = new.propertyColumns
        for link in reverse.toOneLinks {
            guard link.sourcePath.count == 1, link.orderColumn == nil, let newEntity = new.entity(named: entity),
                  let relationship = new.allRelationships(of: newEntity).first(where: { $0.name == link.sourcePath[0] }), !relationship.isToMany,
                  let column = newColumns.column(ofProperty: relationship.name, of: newEntity, in: new),
                  let target = mappings.first(where: { $0.name == link.mappingName }),
                  let linked = new.entity(named: relationship.destination).map({ StoreNaming.tableName(entity: new.root(of: $0).name) }),
                  keptFrom(linked) == target.destinationTable else {
                throw NotWritten(reason: "\(name): the link \(link.column) is not a to-one of \(entity) whose rows keep their keys")
            }
            columns.append(link.column)
            values.append("\(ident: SourceJoins.sourceAlias, column)")
        }
        return EntityWrite(newEntity: entity, oldEntity: reverse.destinationEntity, columns: columns, values: values)
    }
}
