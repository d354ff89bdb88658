import Mapping
import ObjectModel
import SQLBuilding

/// Stage 1 of one entity mapping: each source row passing the filter gets its destination key
/// (the association), then its destination row with the attributes and the to-one links whose
/// association is there already; set-based (`insertInstances`) or streamed through Swift
/// (`stream`).
struct StageOneStatements {
    var schemas: HeavyweightSchemas

    /// First half: each source row passing the filter gets a new destination key, in source
    /// key order.
    /// With `keys` (a catch-up round): only those source rows, and only those not associated yet.
    func associate(_ mapping: ResolvedEntityMapping, only keys: CatchUpKeys? = nil) -> [PlannedStatement] {
        var (joins, condition) = schemas.sourceRows(mapping)
        if let keys {
            condition.append("""
                 AND s._pk IN \(keys.of(mapping.sourceTable))
                  AND NOT EXISTS (SELECT 1 FROM \(ident: schemas.staging, schemas.associationRows) AS x WHERE x.entity_mapping = \(literal: mapping.name) AND x.source_pk = s._pk)
                """)
        }
        let associate: SQL = """
            INSERT INTO \(ident: schemas.staging, schemas.associationRows) (entity_mapping, source_pk, destination_pk)
            SELECT \(literal: mapping.name), s._pk, nextval(pg_get_serial_sequence(\(literal: schemas.sequence(of: mapping.destinationTable)), '_pk'))
            FROM \(ident: schemas.store, mapping.sourceTable) AS s\(joins.sql)
            WHERE \(condition)
            ORDER BY s._pk
            """
        return [PlannedStatement(associate, lock: .rowExclusive, summary: "stage 1, \(mapping.name): associate each \(mapping.sourceEntities.joined(separator: "/")) row\(mapping.filter == nil ? "" : " passing the filter") with a new \(mapping.destinationEntity) key")]
    }

    /// The to-one links set in stage 1: a join of the association per link (`"l.<column>"`),
    /// and per column the linked row's key.
    private func links(_ mapping: ResolvedEntityMapping, _ joins: inout SourceJoins) -> (joins: SQL, keys: [(column: String, key: SQL)]) {
        var sql: SQL = ""
        var keys: [(String, SQL)] = []
        for link in mapping.toOneLinks where mapping.linkedInStageOne.contains(link.column) {
            let key = joins.key(of: link.sourcePath)
            joins.add(key.joinPath)
            if mapping.linkedByKey.contains(link.column) {
                keys.append((link.column, key.sql))
                continue
            }
            let alias = "l." + link.column
            sql.append("\nLEFT JOIN \(ident: schemas.staging, schemas.association) AS \(ident: alias) ON \(ident: alias, "entity_mapping") = \(literal: link.mappingName) AND \(ident: alias, "source_pk") = \(key.sql)")
            keys.append((link.column, "\(ident: alias, "destination_pk")"))
        }
        return (sql, keys)
    }

    /// Second half, set-based: the destination rows with their attributes.
    /// With `keys` (a catch-up round): only the rows made from those source rows.
    func insertInstances(_ mapping: ResolvedEntityMapping, only keys: CatchUpKeys? = nil) -> PlannedStatement {
        let compiler = SQLExpressionCompiler(sourceAlias: SourceJoins.sourceAlias)
        var (joins, condition) = schemas.sourceRows(mapping)
        for attribute in mapping.attributes { joins.add(attribute.expression.joins) }
        // compile returns nil only for expressions needing Swift, which stream instead.
        var columns = ["_pk", "_entity"] + mapping.attributes.map(\.column)
        var select: [SQL] = [mapping.keepsSourceKeys ? "s._pk" : "a.destination_pk", "\(literal: mapping.destinationEntity)"]
            + mapping.attributes.map { compiler.compile($0.expression)! }
        let (linkJoins, linked) = links(mapping, &joins)
        for (column, key) in linked {
            columns.append(column)
            select.append(key)
        }
        let from: SQL = mapping.keepsSourceKeys
            ? """
                FROM \(ident: schemas.store, mapping.sourceTable) AS s\(joins.sql)\(linkJoins)
                WHERE \(condition)\(restriction(keys, mapping))
                """
            : """
                FROM \(ident: schemas.staging, schemas.association) AS a
                JOIN \(ident: schemas.store, mapping.sourceTable) AS s ON s._pk = a.source_pk\(joins.sql)\(linkJoins)
                WHERE a.entity_mapping = \(literal: mapping.name)\(restriction(keys, mapping))
                """
        let insert: SQL = """
            INSERT INTO \(ident: schemas.staging, mapping.destinationTable) (\(idents: columns))
            SELECT \(SQL.joined(select, separator: ", "))
            \(from)
            """
        let links = mapping.linkedInStageOne.isEmpty ? "" : " and \(mapping.linkedInStageOne.sorted().joined(separator: ", "))"
        return PlannedStatement(insert, lock: .rowExclusive, summary: "stage 1, \(mapping.name): insert \(mapping.destinationEntity) rows with their attributes\(links)\(mapping.keepsSourceKeys ? ", keeping their keys" : "")")
    }

    /// Second half, streaming: what the engine reads for each associated source row and
    /// computes in Swift. With a policy, the policy sees every stored attribute of the source
    /// object, not only those the expressions read.
    /// With `keys` (a catch-up round): only the rows made from those source rows.
    func stream(_ mapping: ResolvedEntityMapping, only keys: CatchUpKeys? = nil) -> StreamedMapping {
        let source = schemas.source, store = schemas.store, staging = schemas.staging
        let sourceEntity = schemas.sourceEntity(of: mapping)
        let read = schemas.sourceRows(mapping)
        var joins = mapping.keepsSourceKeys ? read.joins : SourceJoins(schema: store, source: source, sourceEntity: sourceEntity)
        var references: [AttributeReference] = []
        if mapping.policy != nil {
            let columns = source.propertyColumns
            references += source.allAttributes(of: sourceEntity).filter { !$0.isTransient }.map {
                AttributeReference(relationships: [], attribute: $0, columnName: columns.column(ofProperty: $0.name, of: sourceEntity, in: source))
            }
        }
        for attribute in mapping.attributes {
            references += attribute.expression.attributes
            joins.add(attribute.expression.joins)
        }
        var seen: Set<String> = []
        references = references.filter { seen.insert($0.key).inserted }
        var values: [SQL] = references.map { reference in
            let column: SQL = "\(ident: SourceJoins.alias(reference.relationships), reference.columnName)"
            switch reference.attribute.type {
            case .date: return "extract(epoch from \(column))::text AS \(ident: reference.key)"
            default: return "\(column) AS \(ident: reference.key)"
            }
        }
        var sourceValues = references.map { StreamedMapping.SourceValue(key: $0.key, type: $0.attribute.type) }
        // Objects passed to policy functions: the key of the related row.
        for object in mapping.attributes.flatMap(\.expression.objects) where !sourceValues.contains(where: { $0.key == object.key }) {
            let key = joins.key(of: object.relationships)
            joins.add(key.joinPath)
            values.append("\(key.sql) AS \(ident: object.key)")
            sourceValues.append(StreamedMapping.SourceValue(key: object.key, type: .integer64))
        }
        // To-one links whose association is there already, read with the row.
        var streamedLinks: [StreamedMapping.StreamedLink] = []
        let (linkJoins, linked) = links(mapping, &joins)
        for (column, key) in linked {
            let value = StreamedMapping.StreamedLink(column: column, key: "_link." + column)
            values.append("\(key) AS \(ident: value.key)")
            sourceValues.append(StreamedMapping.SourceValue(key: value.key, type: .integer64))
            streamedLinks.append(value)
        }
        // Keeping their keys, the rows come straight from the source table, in no set order.
        let select: SQL = mapping.keepsSourceKeys
            ? """
                SELECT \(SQL.joined(["s._pk AS destination_pk", "s._pk AS source_pk", "s._entity AS source_entity"] + values, separator: ", "))
                FROM \(ident: store, mapping.sourceTable) AS s\(joins.sql)\(linkJoins)
                WHERE \(read.condition)\(restriction(keys, mapping))
                """
            : """
                SELECT \(SQL.joined(["a.destination_pk", "s._pk AS source_pk", "s._entity AS source_entity"] + values, separator: ", "))
                FROM \(ident: staging, schemas.association) AS a
                JOIN \(ident: store, mapping.sourceTable) AS s ON s._pk = a.source_pk\(joins.sql)\(linkJoins)
                WHERE a.entity_mapping = \(literal: mapping.name)\(restriction(keys, mapping))
                ORDER BY a.destination_pk
                """
        let prune: SQL = """
            DELETE FROM \(ident: staging, schemas.associationRows) AS a
            WHERE a.entity_mapping = \(literal: mapping.name)
              AND NOT EXISTS (SELECT 1 FROM \(ident: staging, mapping.destinationTable) AS d WHERE d._pk = a.destination_pk)
            """
        return StreamedMapping(
            entityMapping: mapping.name, policy: mapping.policy, sourceEntity: mapping.sourceEntity,
            destinationEntity: mapping.destinationEntity, schema: staging, destinationTable: mapping.destinationTable,
            sourceRows: select,
            sourceValues: sourceValues,
            attributes: destinationAttributes(of: mapping), links: streamedLinks, pruneAssociations: prune
        )
    }

    /// ` AND s._pk IN (the round's keys of the source table)`, or nothing outside a round.
    private func restriction(_ keys: CatchUpKeys?, _ mapping: ResolvedEntityMapping) -> SQL {
        keys.map { " AND s._pk IN \($0.of(mapping.sourceTable))" } ?? ""
    }

    /// The destination entity's stored attributes, in model order, each with its column and
    /// the expression computing it (none: the column default).
    private func destinationAttributes(of mapping: ResolvedEntityMapping) -> [StreamedMapping.StreamedAttribute] {
        guard let version = schemas.destinationVersion, let entity = version.entity(named: mapping.destinationEntity) else { return [] }
        let columns = version.propertyColumns
        return version.allAttributes(of: entity).filter { !$0.isTransient }.map { attribute in
            let column = columns.column(ofProperty: attribute.name, of: entity, in: version) ?? StoreNaming.columnName(attribute: attribute.name)
            return StreamedMapping.StreamedAttribute(
                name: attribute.name, column: column, type: attribute.type,
                expression: mapping.attributes.first { $0.column == column }?.expression
            )
        }
    }
}
