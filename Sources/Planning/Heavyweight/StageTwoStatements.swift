import Mapping
import ObjectModel
import SQLBuilding

/// Stage 2 of one entity mapping, through the association table: its to-one columns (`toOne`,
/// run for every entity mapping first), then its to-many links kept in join tables or in the
/// other side's column (`toMany`).
struct StageTwoStatements {
    var schemas: HeavyweightSchemas
    private var store: String { schemas.store }
    private var staging: String { schemas.staging }
    private var association: String { schemas.association }

    /// Stage 2 of one entity mapping: each to-one column, set to the destination row the named
    /// entity mapping made from the source row the key path leads to; then, when its inverse is
    /// an ordered to-many no entity mapping maps, the positions among each owner's rows, by key
    /// (over the whole table, so that rows other entity mappings made there are numbered too).
    /// With `keys` (a catch-up round): only the rows made from those source rows.
    ///
    /// The positions come out of the window in owner order; joined back to the table as they
    /// come, every row's update would read and write a page at random (a hash join probed in
    /// owner order). Sorted by `_pk` again, and with statistics of the new table (stage 1 just
    /// filled it; without them PostgreSQL hashes it in batches whatever the order), they meet
    /// its rows in key order, a merge join with its primary key, so the update walks the pages
    /// in turn (docs/mapping-format.md, docs/lightweight-migration.md; as `FillOrderColumn`
    /// offline).
    func toOne(_ mapping: ResolvedEntityMapping, only keys: CatchUpKeys? = nil) -> [PlannedStatement] {
        let sourceEntity = schemas.sourceEntity(of: mapping)
        return mapping.toOneLinks.flatMap { link -> [PlannedStatement] in
            let inStageOne = mapping.linkedInStageOne.contains(link.column)
            if inStageOne && link.orderColumn == nil { return [] }
            let restriction: SQL? = keys.map { "a.source_pk IN \($0.of(mapping.sourceTable))" }
            let linked = linkedRows(mapping, sourceEntity: sourceEntity, through: link.mappingName, at: link.sourcePath, only: restriction)
            let sql: SQL = """
                UPDATE \(ident: staging, mapping.destinationTable) AS d SET \(ident: link.column) = a2.destination_pk
                \(linked.from) AND d._pk = a.destination_pk
                """
            let linking = PlannedStatement(sql, lock: .rowExclusive, summary: "stage 2, \(mapping.name): \(mapping.destinationTable).\(link.column) through \(link.mappingName) from $source.\(link.sourcePath.joined(separator: "."))")
            guard let order = link.orderColumn else { return [linking] }
            let linkingHere = inStageOne ? [] : [linking]
            let numbering: SQL = """
                UPDATE \(ident: staging, mapping.destinationTable) AS d SET \(ident: order) = p.position
                FROM (SELECT _pk, (row_number() OVER (PARTITION BY \(ident: link.column) ORDER BY _pk) - 1)::integer AS position
                      FROM \(ident: staging, mapping.destinationTable) WHERE \(ident: link.column) IS NOT NULL ORDER BY _pk) AS p
                WHERE d._pk = p._pk AND d.\(ident: order) IS DISTINCT FROM p.position
                """
            let positions = PlannedStatement(numbering, lock: .rowExclusive, summary: "stage 2, \(mapping.name): \(mapping.destinationTable).\(order), positions by key")
            // A catch-up round comes after the step's own stage 2, which analyzed the table.
            guard keys == nil else { return linkingHere + [positions] }
            let statistics = PlannedStatement(
                "ANALYZE \(ident: staging, mapping.destinationTable)", lock: .shareUpdateExclusive,
                summary: "stage 2, \(mapping.name): statistics of \(mapping.destinationTable) for its positions"
            )
            return linkingHere + [statistics, positions]
        }
    }

    /// Stage 2 of one entity mapping, after every to-one column is set: the links kept apart
    /// from its rows. The pairs (row made from source row s, row `link.mappingName` made from
    /// each source object at the key path), with each linked row's position among its owner's
    /// (the source's order, else the linked source rows' `_pk`), go
    /// 1. into a join table; a pair the other side's mapping put there already is kept, with
    ///    this side's position added;
    /// 2. into the inverse's to-one column of the linked rows, where the to-one side's mapping
    ///    left it empty or agrees (then only the position is added); a row linked from several
    ///    owners takes the first.
    /// With `keys` (a catch-up round): only the pairs whose owner or linked row was made from
    /// those source rows (`sourceTables`: each entity mapping's source table).
    func toMany(_ mapping: ResolvedEntityMapping, only keys: CatchUpKeys? = nil, sourceTables: [String: String] = [:]) -> [PlannedStatement] {
        let sourceEntity = schemas.sourceEntity(of: mapping)
        return mapping.toManyLinks.map { link in
            // An ordered link's positions count every link of the owner: owners `CatchUpLinks` found too.
            let restriction: SQL? = keys.map { keys in
                let owners: SQL = link.orderColumn == nil ? "" : " OR a.destination_pk IN \(keys.owners(of: CatchUpLinks.name(mapping, link)))"
                return "(a.source_pk IN \(keys.of(mapping.sourceTable)) OR a2.source_pk IN \(keys.of(sourceTables[link.mappingName] ?? mapping.sourceTable))\(owners))"
            }
            let linked = linkedRows(mapping, sourceEntity: sourceEntity, through: link.mappingName, at: link.sourcePath, only: restriction)
            let sortKeys: [SQL] = (linked.order.map { [$0] } ?? []) + ["a2.source_pk"]
            let position: SQL = "(row_number() OVER (PARTITION BY a.destination_pk ORDER BY \(SQL.joined(sortKeys, separator: ", "))) - 1)::integer"
            let sql: SQL
            let summary: String
            switch link.storage {
            case .joinTable(let table, let ownColumn, let otherColumn):
                var select: SQL = "SELECT a.destination_pk, a2.destination_pk"
                var conflict: SQL = "DO NOTHING"
                if let order = link.orderColumn {
                    select.append(", \(position)")
                    conflict = "DO UPDATE SET \(ident: order) = EXCLUDED.\(ident: order)"
                }
                sql = """
                    INSERT INTO \(ident: staging, table) (\(idents: [ownColumn, otherColumn] + (link.orderColumn.map { [$0] } ?? [])))
                    \(select)
                    \(linked.from)
                    ON CONFLICT (\(idents: [ownColumn, otherColumn])) \(conflict)
                    """
                summary = table
            case .inverseColumn(let table, let column):
                var set: SQL = "\(ident: column) = p.owner_pk"
                var select: SQL = "SELECT DISTINCT ON (a2.destination_pk) a.destination_pk AS owner_pk, a2.destination_pk AS linked_pk"
                var condition: SQL = "d.\(ident: column) IS NULL"
                // Or the key a row inserted after stage 3's build holds until linked, where required.
                if RequiredLinkPlaceholders.holds(column, of: table, in: schemas.destination) {
                    condition.append(" OR \(RequiredLinkPlaceholders.isPlaceholder("d", column))")
                }
                if let order = link.orderColumn {
                    set.append(", \(ident: order) = p.position")
                    select.append(", \(position) AS position")
                    condition.append(" OR d.\(ident: column) = p.owner_pk")
                }
                sql = """
                    UPDATE \(ident: staging, table) AS d SET \(set)
                    FROM (\(select)
                    \(linked.from)
                    ORDER BY a2.destination_pk, a.destination_pk) AS p
                    WHERE d._pk = p.linked_pk AND (\(condition))
                    """
                summary = "\(table).\(column)"
            }
            return PlannedStatement(sql, lock: .rowExclusive, summary: "stage 2, \(mapping.name): \(mapping.destinationEntity).\(link.relationship) in \(summary) through \(link.mappingName) from $source.\(link.sourcePath.joined(separator: "."))")
        }
    }

    /// `FROM` the association rows of `mapping` (`a`) and their source rows (`s`), joined to
    /// the rows entity mapping `mappingName` made (`a2`) from the source objects at `path`;
    /// the objects' order when the path ends in an ordered relationship.
    private func linkedRows(
        _ mapping: ResolvedEntityMapping, sourceEntity: Entity, through mappingName: String, at path: [String], only restriction: SQL?
    ) -> (from: SQL, order: SQL?) {
        var joins = SourceJoins(schema: store, source: schemas.source, sourceEntity: sourceEntity)
        let objects = joins.objects(at: path)
        joins.add(objects.joinPath)
        var from: SQL = """
            FROM \(ident: staging, association) AS a
            JOIN \(ident: store, mapping.sourceTable) AS s ON s._pk = a.source_pk\(joins.sql)\(objects.join)
            JOIN \(ident: staging, association) AS a2 ON a2.entity_mapping = \(literal: mappingName) AND a2.source_pk = \(objects.key)
            WHERE a.entity_mapping = \(literal: mapping.name)
            """
        if let restriction { from.append(" AND \(restriction)") }
        return (from, objects.order)
    }
}
