import ObjectModel
import SQLBuilding

/// What the old version cannot hold, found by `rollback` before it changes anything: a query
/// counts the rows that would lose it. Rows counted need `--allow-data-loss`; a value that does
/// not fit the old type stops the rollback whatever (the rows must be changed first).
public struct RollbackLoss: Sendable, Hashable {
    /// Stable codes (docs/rolling-deploys.md, "rollback").
    public enum Code: String, Sendable, Hashable {
        /// An attribute the new version added holds values other than its default.
        case rollbackDropsValues
        /// A relationship the new version added holds links.
        case rollbackDropsLinks
        /// Rows of an entity the new version added.
        case rollbackDropsRows
        /// Values a type the old version narrows cannot hold.
        case rollbackValueDoesNotFit
    }

    public var code: Code
    public var message: String
    /// `SELECT count(*) AS rows …`: the rows that lose it.
    public var counting: SQL

    /// `--allow-data-loss` accepts the loss: the step back drops what is counted.
    public var isAcceptable: Bool { code != .rollbackValueDoesNotFit }

    /// 1. Entities of the new version only: their rows.
    /// 2. Attributes and relationships of the new version only, per column: the rows of the
    ///    entities having it whose value is not NULL (nor the column's default); a join table:
    ///    its rows.
    /// 3. The step's data checks (a narrowed number): the rows they would stop at.
    static func losses(of back: InferredMapping, pairing: LayoutPairing, checks: [any SchemaChange], schema: String) -> [RollbackLoss] {
        let new = pairing.source, layout = pairing.sourceLayout
        func table(of entity: String) -> TableLayout? { layout.tables.first { $0.kind.isHierarchy && $0.entities.contains(entity) } }
        var losses: [RollbackLoss] = []
        var columns: [(table: TableLayout, column: ColumnLayout, property: String, code: Code, entities: [String])] = []
        var joinTables: [TableLayout] = []
        for mapping in back.entityMappings where !mapping.sourceIsAbstract {
            guard let name = mapping.sourceEntity, let entity = new.entity(named: name), let table = table(of: name) else { continue }
            if mapping.kind == .remove {
                losses.append(RollbackLoss(
                    code: .rollbackDropsRows, message: "rows of \(name) (an entity '\(back.destination)' does not have) are deleted",
                    counting: "SELECT count(*) AS rows FROM \(ident: schema, table.name) WHERE \(ident: "_entity") = \(literal: name)"
                ))
                continue
            }
            let removed = mapping.attributeMappings.filter(\.losesData).map { ($0.source!, Code.rollbackDropsValues) }
                + mapping.relationshipMappings.filter(\.losesData).map { ($0.source!, Code.rollbackDropsLinks) }
            for (property, code) in removed {
                if let columnName = pairing.sourceColumns.column(ofProperty: property, of: entity, in: new), let column = table.column(named: columnName) {
                    if let index = columns.firstIndex(where: { $0.table.name == table.name && $0.column.name == columnName }) {
                        columns[index].entities.append(name)
                    } else {
                        columns.append((table, column, property, code, [name]))
                    }
                } else if let join = layout.tables.first(where: { joinTable in
                    guard case .join(let owner, let relationship) = joinTable.kind else { return false }
                    return relationship == property && new.ancestry(of: entity).contains { $0.name == owner }
                }), !joinTables.contains(join) {
                    joinTables.append(join)
                }
            }
        }
        for (table, column, property, code, entities) in columns {
            var condition: SQL = "\(ident: "_entity") IN (\(literals: entities)) AND \(ident: column.name) IS NOT NULL"
            if let value = column.defaultExpression { condition.append(" AND \(ident: column.name) IS DISTINCT FROM \(value)") }
            let what = code == .rollbackDropsValues ? "values\(column.defaultExpression == nil ? "" : " other than its default")" : "links"
            losses.append(RollbackLoss(
                code: code, message: "\(entities.joined(separator: ", ")).\(property) (not in '\(back.destination)'): its \(what) in \(table.name).\(column.name) are dropped",
                counting: "SELECT count(*) AS rows FROM \(ident: schema, table.name) WHERE \(condition)"
            ))
        }
        for join in joinTables {
            guard case .join(let owner, let relationship) = join.kind else { continue }
            losses.append(RollbackLoss(
                code: .rollbackDropsLinks, message: "\(owner).\(relationship) (not in '\(back.destination)'): its links in \(join.name) are dropped",
                counting: "SELECT count(*) AS rows FROM \(ident: schema, join.name)"
            ))
        }
        for change in checks {
            guard case .dataCheck(let check) = change.kind, check.linkingTo == nil else { continue }
            losses.append(RollbackLoss(
                code: .rollbackValueDoesNotFit, message: check.problem,
                counting: "SELECT count(*) AS rows FROM \(ident: schema, check.table) WHERE \(check.offending)"
            ))
        }
        return losses
    }
}
