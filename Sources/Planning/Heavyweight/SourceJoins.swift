import Mapping
import ObjectModel
import SQLBuilding

/// The `LEFT JOIN`s that bring the rows at the end of to-one paths into a statement over the
/// source table aliased `s`, under the aliases `SQLExpressionCompiler` uses.
struct SourceJoins: Sendable {
    static let sourceAlias = "s"

    var schema: String
    var source: ModelVersion
    var sourceEntity: Entity
    /// Each path once, shortest first.
    private(set) var paths: [[String]] = []
    private let columns: PropertyColumns

    init(schema: String, source: ModelVersion, sourceEntity: Entity) {
        self.schema = schema
        self.source = source
        self.sourceEntity = sourceEntity
        columns = source.propertyColumns
    }

    /// The column of a to-one as seen from rows of `entity` (its own or an ancestor's).
    private func toOneColumn(_ relationship: Relationship, of entity: Entity) -> String {
        columns.column(ofProperty: relationship.name, of: entity, in: source) ?? StoreNaming.foreignKeyColumnName(relationship: relationship.name)
    }

    static func alias(_ path: [String]) -> String {
        path.isEmpty ? sourceAlias : SQLExpressionCompiler.defaultJoinAlias(sourceAlias: sourceAlias, path: path)
    }

    /// Adds a path and every prefix of it.
    mutating func add(_ path: [String]) {
        for length in stride(from: 1, through: path.count, by: 1) {
            let prefix = Array(path[..<length])
            if !paths.contains(prefix) { paths.append(prefix) }
        }
        paths.sort { $0.count < $1.count }
    }

    mutating func add(_ joins: [ToOneJoin]) {
        for join in joins { add(join.path) }
    }

    /// The entity a path leads to and the relationship followed last; nil for a path that is
    /// not to-one relationships all the way (the checker has ruled that out already).
    func step(_ path: [String]) -> (relationship: Relationship, declaring: Entity, target: Entity)? {
        var entity = sourceEntity
        var last: (Relationship, Entity, Entity)?
        for name in path {
            guard let relationship = source.allRelationships(of: entity).first(where: { $0.name == name }),
                  let target = source.entity(named: relationship.destination) else { return nil }
            let declaring = source.ancestry(of: entity).last { $0.relationships.contains(relationship) } ?? entity
            last = (relationship, declaring, target)
            entity = target
        }
        return last
    }

    /// The source key of the row at the end of `path`: the to-one column of the row before it
    /// when it holds one, else the joined row's `_pk` (the caller joins the whole path then).
    func key(of path: [String]) -> (sql: SQL, joinPath: [String]) {
        if let (relationship, declaring, _) = step(path),
           StoreLayout.storage(of: relationship, in: declaring, version: source) == .column {
            return ("\(ident: Self.alias(Array(path.dropLast())), toOneColumn(relationship, of: declaring))", Array(path.dropLast()))
        }
        return ("\(ident: Self.alias(path), "_pk")", path)
    }

    /// The source objects at the end of `path`, which may end in a to-many: each one's key,
    /// its position when the last relationship is ordered, the path the caller joins with
    /// `add`, and a `JOIN` to append after `sql` (a to-many read from its join table or its
    /// inverse's column, under the alias of the whole path).
    func objects(at path: [String]) -> (key: SQL, order: SQL?, joinPath: [String], join: SQL) {
        guard let (relationship, declaring, target) = step(path), relationship.isToMany else {
            let key = key(of: path)
            return (key.sql, nil, key.joinPath, "")
        }
        let (holder, alias) = (Self.alias(Array(path.dropLast())), Self.alias(path))
        let storage = StoreLayout.storage(of: relationship, in: declaring, version: source)
        let inverse = source.inverse(of: relationship)
        let table: String, holderColumn: String, keyColumn: String
        var orderColumn = StoreNaming.orderColumnName(relationship: relationship.name)
        switch (storage, inverse) {
        case (.inverseColumn, let inverse?):
            table = StoreNaming.tableName(entity: source.root(of: target).name)
            (holderColumn, keyColumn) = (toOneColumn(inverse, of: target), "_pk")
            let holder = source.ancestry(of: target).last { $0.relationships.contains(inverse) } ?? target
            orderColumn = columns.orderColumn(ofToOne: inverse.name, declaredBy: holder.name) ?? orderColumn
        case (.inverseJoinTable, let inverse?):
            let owner = source.ancestry(of: target).last { $0.relationships.contains(inverse) } ?? target
            table = StoreNaming.joinTableName(entity: owner.name, relationship: inverse.name)
            (holderColumn, keyColumn) = (StoreNaming.foreignKeyColumnName(relationship: inverse.name), StoreNaming.foreignKeyColumnName(relationship: owner.name))
        default:
            table = StoreNaming.joinTableName(entity: declaring.name, relationship: relationship.name)
            (holderColumn, keyColumn) = (StoreNaming.foreignKeyColumnName(relationship: declaring.name), StoreNaming.foreignKeyColumnName(relationship: relationship.name))
        }
        let order: SQL? = relationship.isOrdered ? "\(ident: alias, orderColumn)" : nil
        return ("\(ident: alias, keyColumn)", order, Array(path.dropLast()),
                "\nJOIN \(ident: schema, table) AS \(ident: alias) ON \(ident: alias, holderColumn) = \(ident: holder, "_pk")")
    }

    /// `LEFT JOIN "store"."chef" AS "s.chef" ON "s.chef"."_pk" = "s"."chef_pk"`, one per path;
    /// a one-to-one stored on the other side joins on that side's column.
    var sql: SQL {
        var text: SQL = ""
        for path in paths {
            guard let (relationship, declaring, target) = step(path) else { continue }
            let table = StoreNaming.tableName(entity: source.root(of: target).name)
            let (parent, child) = (Self.alias(Array(path.dropLast())), Self.alias(path))
            if StoreLayout.storage(of: relationship, in: declaring, version: source) == .column {
                let column = toOneColumn(relationship, of: declaring)
                text.append("\nLEFT JOIN \(ident: schema, table) AS \(ident: child) ON \(ident: child, "_pk") = \(ident: parent, column)")
            } else if let inverse = source.inverse(of: relationship) {
                let column = toOneColumn(inverse, of: target)
                text.append("\nLEFT JOIN \(ident: schema, table) AS \(ident: child) ON \(ident: child, column) = \(ident: parent, "_pk")")
            }
        }
        return text
    }
}
