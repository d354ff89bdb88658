import Mapping
import ObjectModel
import SQLBuilding

/// Writes the SQL of a heavyweight step: staging schema, stages 1 to 3 and the swap.
struct StatementBuilder {
    var store: String
    var staging: String
    var source: ModelVersion
    /// The destination version laid out in the staging schema.
    var destination: StoreLayout
    var destinationVersion: ModelVersion?

    private var association: String { HeavyweightMigration.associationTable }
    private var associationRows: String { HeavyweightMigration.associationRowsTable }

    /// The staging schema and its tables: CREATE TABLE as `CreateStore` writes it, with to-one
    /// columns nullable and their required-checks left for stage 3 (rows get their links only
    /// in stage 2).
    func createStaging(_ mappings: [ResolvedEntityMapping]) -> [PlannedStatement] {
        // The schema itself, with the checkpoint table, comes from `ChangeTracking.install`.
        var statements: [PlannedStatement] = []
        for table in destination.tables {
            statements.append(PlannedStatement(
                CreateStore.createTable(bare(table), schema: staging), lock: .accessExclusive,
                summary: "create table \(staging).\(table.name)\(CreateStore.describe(table.kind))"
            ))
        }
        // Tables keeping their source keys: new keys (a policy's instances, the application's
        // rows later) start after the largest.
        var kept: [String: String] = [:]
        for mapping in mappings where mapping.keepsSourceKeys { kept[mapping.destinationTable] = mapping.sourceTable }
        for (table, sourceTable) in kept.sorted(by: { $0.key < $1.key }) {
            let sequence = quoteIdentifier(staging) + "." + quoteIdentifier(table)
            statements.append(PlannedStatement("""
                SELECT setval(pg_get_serial_sequence(\(literal: sequence), '_pk'), greatest((SELECT max(_pk) FROM \(ident: store, sourceTable)), 1))
                """, lock: .accessShare, summary: "keys of \(staging).\(table) after those kept from \(store).\(sourceTable)"))
        }
        statements.append(PlannedStatement("""
            CREATE TABLE \(ident: staging, associationRows) (
                entity_mapping text NOT NULL,
                source_pk bigint NOT NULL,
                destination_pk bigint NOT NULL,
                PRIMARY KEY (entity_mapping, source_pk)
            )
            """, lock: .accessExclusive, summary: "create the association table"))
        var branches: [SQL] = ["SELECT entity_mapping, source_pk, destination_pk FROM \(ident: staging, associationRows)"]
        for mapping in mappings where mapping.keepsSourceKeys {
            let (joins, condition) = sourceRows(mapping)
            branches.append("""
                SELECT \(literal: mapping.name)::text, s._pk, s._pk
                FROM \(ident: store, mapping.sourceTable) AS s\(joins.sql)
                WHERE \(condition)
                """)
        }
        statements.append(PlannedStatement("""
            CREATE VIEW \(ident: staging, association) (entity_mapping, source_pk, destination_pk) AS
            \(SQL.joined(branches, separator: "\nUNION ALL\n"))
            """, lock: .accessExclusive, summary: "create the association view (entity mappings keeping their source keys read the source rows)"))
        return statements
    }

    /// Stage 1 of one entity mapping, first half: each source row passing the filter gets a new
    /// destination key, in source key order.
    func associate(_ mapping: ResolvedEntityMapping) -> [PlannedStatement] {
        let (joins, condition) = sourceRows(mapping)
        let sequence = quoteIdentifier(staging) + "." + quoteIdentifier(mapping.destinationTable)
        let associate: SQL = """
            INSERT INTO \(ident: staging, associationRows) (entity_mapping, source_pk, destination_pk)
            SELECT \(literal: mapping.name), s._pk, nextval(pg_get_serial_sequence(\(literal: sequence), '_pk'))
            FROM \(ident: store, mapping.sourceTable) AS s\(joins.sql)
            WHERE \(condition)
            ORDER BY s._pk
            """
        return [PlannedStatement(associate, lock: .rowExclusive, summary: "stage 1, \(mapping.name): associate each \(mapping.sourceEntities.joined(separator: "/")) row\(mapping.filter == nil ? "" : " passing the filter") with a new \(mapping.destinationEntity) key")]
    }

    /// The to-one links set in stage 1: a join of the association per link (`"l.<column>"`),
    /// and per column the linked row's key.
    private func stageOneLinks(_ mapping: ResolvedEntityMapping, _ joins: inout SourceJoins) -> (joins: SQL, keys: [(column: String, key: SQL)]) {
        var sql = SQL(unsafeRaw: "")
        var keys: [(String, SQL)] = []
        for link in mapping.toOneLinks where mapping.linkedInStageOne.contains(link.column) {
            let key = joins.key(of: link.sourcePath)
            joins.add(key.joinPath)
            if mapping.linkedByKey.contains(link.column) {
                keys.append((link.column, key.sql))
                continue
            }
            let alias = "l." + link.column
            sql.append("\nLEFT JOIN \(ident: staging, association) AS \(ident: alias) ON \(ident: alias, "entity_mapping") = \(literal: link.mappingName) AND \(ident: alias, "source_pk") = \(key.sql)")
            keys.append((link.column, "\(ident: alias, "destination_pk")"))
        }
        return (sql, keys)
    }

    /// The source rows an entity mapping reads (`s`): its entities, passing its filter.
    private func sourceRows(_ mapping: ResolvedEntityMapping) -> (joins: SourceJoins, condition: SQL) {
        guard let sourceEntity = source.entity(named: mapping.sourceEntity) else { preconditionFailure("resolved against this version") }
        var joins = SourceJoins(schema: store, source: source, sourceEntity: sourceEntity)
        joins.add(mapping.filter?.joins ?? [])
        var condition: SQL = "\(ident: SourceJoins.sourceAlias, "_entity") IN (\(literals: mapping.sourceEntities))"
        if let filter = mapping.filter { condition.append(" AND \(SQLExpressionCompiler(sourceAlias: SourceJoins.sourceAlias).compile(filter))") }
        return (joins, condition)
    }

    /// Stage 1, second half, set-based: the destination rows with their attributes.
    func insertInstances(_ mapping: ResolvedEntityMapping) -> PlannedStatement {
        let compiler = SQLExpressionCompiler(sourceAlias: SourceJoins.sourceAlias)
        var (joins, condition) = sourceRows(mapping)
        for attribute in mapping.attributes { joins.add(attribute.expression.joins) }
        // compile returns nil only for expressions needing Swift, which stream instead.
        var columns = ["_pk", "_entity"] + mapping.attributes.map(\.column)
        var select: [SQL] = [mapping.keepsSourceKeys ? "s._pk" : "a.destination_pk", "\(literal: mapping.destinationEntity)"]
            + mapping.attributes.map { compiler.compile($0.expression)! }
        let (linkJoins, linked) = stageOneLinks(mapping, &joins)
        for (column, key) in linked {
            columns.append(column)
            select.append(key)
        }
        let from: SQL = mapping.keepsSourceKeys
            ? """
                FROM \(ident: store, mapping.sourceTable) AS s\(joins.sql)\(linkJoins)
                WHERE \(condition)
                """
            : """
                FROM \(ident: staging, association) AS a
                JOIN \(ident: store, mapping.sourceTable) AS s ON s._pk = a.source_pk\(joins.sql)\(linkJoins)
                WHERE a.entity_mapping = \(literal: mapping.name)
                """
        let insert: SQL = """
            INSERT INTO \(ident: staging, mapping.destinationTable) (\(idents: columns))
            SELECT \(SQL.joined(select, separator: ", "))
            \(from)
            """
        let links = mapping.linkedInStageOne.isEmpty ? "" : " and \(mapping.linkedInStageOne.sorted().joined(separator: ", "))"
        return PlannedStatement(insert, lock: .rowExclusive, summary: "stage 1, \(mapping.name): insert \(mapping.destinationEntity) rows with their attributes\(links)\(mapping.keepsSourceKeys ? ", keeping their keys" : "")")
    }

    /// Stage 1, second half, streaming: what the engine reads for each associated source row
    /// and computes in Swift. With a policy, the policy sees every stored attribute of the
    /// source object, not only those the expressions read.
    func stream(_ mapping: ResolvedEntityMapping) -> StreamedMapping {
        guard let sourceEntity = source.entity(named: mapping.sourceEntity) else { preconditionFailure("resolved against this version") }
        let read = sourceRows(mapping)
        var joins = mapping.keepsSourceKeys ? read.joins : SourceJoins(schema: store, source: source, sourceEntity: sourceEntity)
        var references: [AttributeReference] = []
        if mapping.policy != nil {
            let columns = PropertyColumns(version: source)
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
        var links: [StreamedMapping.StreamedLink] = []
        let (linkJoins, linked) = stageOneLinks(mapping, &joins)
        for (column, key) in linked {
            let value = StreamedMapping.StreamedLink(column: column, key: "_link." + column)
            values.append("\(key) AS \(ident: value.key)")
            sourceValues.append(StreamedMapping.SourceValue(key: value.key, type: .integer64))
            links.append(value)
        }
        // Keeping their keys, the rows come straight from the source table, in no set order.
        let select: SQL = mapping.keepsSourceKeys
            ? """
                SELECT \(SQL.joined(["s._pk AS destination_pk", "s._pk AS source_pk", "s._entity AS source_entity"] + values, separator: ", "))
                FROM \(ident: store, mapping.sourceTable) AS s\(joins.sql)\(linkJoins)
                WHERE \(read.condition)
                """
            : """
                SELECT \(SQL.joined(["a.destination_pk", "s._pk AS source_pk", "s._entity AS source_entity"] + values, separator: ", "))
                FROM \(ident: staging, association) AS a
                JOIN \(ident: store, mapping.sourceTable) AS s ON s._pk = a.source_pk\(joins.sql)\(linkJoins)
                WHERE a.entity_mapping = \(literal: mapping.name)
                ORDER BY a.destination_pk
                """
        let prune: SQL = """
            DELETE FROM \(ident: staging, associationRows) AS a
            WHERE a.entity_mapping = \(literal: mapping.name)
              AND NOT EXISTS (SELECT 1 FROM \(ident: staging, mapping.destinationTable) AS d WHERE d._pk = a.destination_pk)
            """
        let columns = destinationVersion.map(PropertyColumns.init(version:))
        let entity = destinationVersion?.entity(named: mapping.destinationEntity)
        let attributes = destinationAttributes(of: mapping).map { attribute in
            let column = entity.flatMap { columns?.column(ofProperty: attribute.name, of: $0, in: destinationVersion!) } ?? StoreNaming.columnName(attribute: attribute.name)
            return StreamedMapping.StreamedAttribute(
                name: attribute.name, column: column, type: attribute.type,
                expression: mapping.attributes.first { $0.column == column }?.expression
            )
        }
        return StreamedMapping(
            entityMapping: mapping.name, policy: mapping.policy, sourceEntity: mapping.sourceEntity,
            destinationEntity: mapping.destinationEntity, schema: staging, destinationTable: mapping.destinationTable,
            sourceRows: select,
            sourceValues: sourceValues,
            attributes: attributes, links: links, pruneAssociations: prune
        )
    }

    /// The destination entity's stored attributes, in model order.
    private func destinationAttributes(of mapping: ResolvedEntityMapping) -> [Attribute] {
        guard let version = destinationVersion, let entity = version.entity(named: mapping.destinationEntity) else { return [] }
        return version.allAttributes(of: entity).filter { !$0.isTransient }
    }

    /// Stage 2 of one entity mapping: each to-one column, set to the destination row the named
    /// entity mapping made from the source row the key path leads to; then, when its inverse is
    /// an ordered to-many no entity mapping maps, the positions among each owner's rows, by key
    /// (over the whole table, so that rows other entity mappings made there are numbered too).
    func stageTwo(_ mapping: ResolvedEntityMapping) -> [PlannedStatement] {
        guard let sourceEntity = source.entity(named: mapping.sourceEntity) else { preconditionFailure("resolved against this version") }
        return mapping.toOneLinks.flatMap { link -> [PlannedStatement] in
            let inStageOne = mapping.linkedInStageOne.contains(link.column)
            if inStageOne && link.orderColumn == nil { return [] }
            let linked = linkedRows(mapping, sourceEntity: sourceEntity, through: link.mappingName, at: link.sourcePath)
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
                      FROM \(ident: staging, mapping.destinationTable) WHERE \(ident: link.column) IS NOT NULL) AS p
                WHERE d._pk = p._pk AND d.\(ident: order) IS DISTINCT FROM p.position
                """
            return linkingHere + [PlannedStatement(numbering, lock: .rowExclusive, summary: "stage 2, \(mapping.name): \(mapping.destinationTable).\(order), positions by key")]
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
    func stageTwoToMany(_ mapping: ResolvedEntityMapping) -> [PlannedStatement] {
        guard let sourceEntity = source.entity(named: mapping.sourceEntity) else { preconditionFailure("resolved against this version") }
        return mapping.toManyLinks.map { link in
            let linked = linkedRows(mapping, sourceEntity: sourceEntity, through: link.mappingName, at: link.sourcePath)
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
    private func linkedRows(_ mapping: ResolvedEntityMapping, sourceEntity: Entity, through mappingName: String, at path: [String]) -> (from: SQL, order: SQL?) {
        var joins = SourceJoins(schema: store, source: source, sourceEntity: sourceEntity)
        let objects = joins.objects(at: path)
        joins.add(objects.joinPath)
        let from: SQL = """
            FROM \(ident: staging, association) AS a
            JOIN \(ident: store, mapping.sourceTable) AS s ON s._pk = a.source_pk\(joins.sql)\(objects.join)
            JOIN \(ident: staging, association) AS a2 ON a2.entity_mapping = \(literal: mappingName) AND a2.source_pk = \(objects.key)
            WHERE a.entity_mapping = \(literal: mapping.name)
            """
        return (from, objects.order)
    }

    /// Stage 3: what `createStaging` left out, then the foreign keys, uniques and indexes as
    /// `CreateStore` writes them (its statements after the schema and the tables).
    func stageThree() -> [PlannedStatement] {
        // Fresh statistics first: autovacuum may have analyzed a table while its to-one columns
        // were still empty, and the foreign key checks would then plan a nested loop over
        // every row.
        var statements = [PlannedStatement(
            "ANALYZE \(SQL.joined(destination.tables.map { "\(ident: staging, $0.name)" }, separator: ", "))",
            lock: .shareUpdateExclusive, summary: "stage 3: statistics of the new tables for the checks"
        )]
        for table in destination.tables {
            for column in deferredNotNull(table) {
                statements.append(PlannedStatement(
                    "ALTER TABLE \(ident: staging, table.name) ALTER COLUMN \(ident: column) SET NOT NULL",
                    lock: .accessExclusive, summary: "stage 3: \(table.name).\(column) NOT NULL"
                ))
            }
            for check in deferredChecks(table) {
                statements.append(PlannedStatement(
                    "ALTER TABLE \(ident: staging, table.name) ADD CONSTRAINT \(ident: check.name) CHECK (\(check.expression))",
                    lock: .accessExclusive, summary: "stage 3: check \(check.name)"
                ))
            }
        }
        let constraints = CreateStore.statements(for: destination).dropFirst(1 + destination.tables.count)
        return statements + constraints.map { PlannedStatement($0.sql, lock: $0.lock, summary: "stage 3: " + $0.summary) }
            + countChecks()
    }

    /// Core Data's min/max counts of to-many relationships, which no constraint keeps: each
    /// counted per row of the entity (and its sub-entities), stopping the step naming the
    /// relationship, how many rows break it and the first keys.
    func countChecks() -> [PlannedStatement] {
        guard let version = destinationVersion else { return [] }
        let columns = PropertyColumns(version: version)
        var statements: [PlannedStatement] = []
        for entity in version.entities {
            let table = StoreNaming.tableName(entity: version.root(of: entity).name)
            let owner: SQL = "\(ident: staging, table).\(ident: "_pk")"
            for relationship in entity.relationships where relationship.isToMany && (relationship.minCount > 0 || relationship.maxCount > 0) {
                let links: SQL
                switch StoreLayout.storage(of: relationship, in: entity, version: version) {
                case .inverseColumn:
                    guard let inverse = version.inverse(of: relationship), let target = version.entity(named: relationship.destination),
                          let column = columns.column(ofProperty: inverse.name, of: target, in: version) else { continue }
                    links = "SELECT count(*) FROM \(ident: staging, StoreNaming.tableName(entity: version.root(of: target).name)) AS l WHERE l.\(ident: column) = \(owner)"
                case .joinTable:
                    links = "SELECT count(*) FROM \(ident: staging, StoreNaming.joinTableName(entity: entity.name, relationship: relationship.name)) AS l WHERE l.\(ident: StoreNaming.foreignKeyColumnName(relationship: entity.name)) = \(owner)"
                case .inverseJoinTable:
                    guard let inverse = version.inverse(of: relationship) else { continue }
                    links = "SELECT count(*) FROM \(ident: staging, StoreNaming.joinTableName(entity: relationship.destination, relationship: inverse.name)) AS l WHERE l.\(ident: StoreNaming.foreignKeyColumnName(relationship: inverse.name)) = \(owner)"
                case .column, .none:
                    continue
                }
                var bounds: [SQL] = []
                if relationship.minCount > 0 { bounds.append("(\(links)) < \(literal: relationship.minCount)") }
                if relationship.maxCount > 0 { bounds.append("(\(links)) > \(literal: relationship.maxCount)") }
                let range = relationship.maxCount > 0 ? "\(relationship.minCount) to \(relationship.maxCount)" : "at least \(relationship.minCount)"
                let check = DataCheck(
                    table: table,
                    offending: "\(ident: "_entity") IN (\(literals: version.hierarchy(of: entity).map(\.name))) AND (\(SQL.joined(bounds, separator: " OR ")))",
                    problem: "rows of \(entity.name) whose \(relationship.name) does not hold \(range) objects",
                    hint: "the destination model's count for \(entity.name).\(relationship.name); the old store is unchanged"
                )
                statements += check.statements(in: staging).map { PlannedStatement($0.sql, lock: $0.lock, summary: "stage 3: " + $0.summary) }
            }
        }
        return statements
    }

    /// Without a backup, the old store is only renamed here: dropping its tables would wait for
    /// the write guard's lock, which is released once the swap has committed (the engine drops
    /// `<store>~retired` then).
    func swap(keepsBackup: Bool) -> [PlannedStatement] {
        var statements: [PlannedStatement] = []
        let retired: String
        if keepsBackup {
            retired = HeavyweightMigration.backupSchema(for: store)
            statements.append(PlannedStatement("DROP SCHEMA IF EXISTS \(ident: retired) CASCADE", lock: .accessExclusive, summary: "drop the previous backup \(retired)"))
            statements.append(PlannedStatement("ALTER SCHEMA \(ident: store) RENAME TO \(ident: retired)", lock: .none, summary: "keep the old store as \(retired)"))
        } else {
            retired = HeavyweightMigration.retiredSchema(for: store)
            statements.append(PlannedStatement("DROP SCHEMA IF EXISTS \(ident: retired) CASCADE", lock: .accessExclusive, summary: "drop a leftover \(retired)"))
            statements.append(PlannedStatement("ALTER SCHEMA \(ident: store) RENAME TO \(ident: retired)", lock: .none, summary: "move the old store aside as \(retired), dropped after the swap"))
        }
        statements += [
            // The change triggers stay on the old tables, with their function, until the
            // write guard is gone (dropping them now would wait for it): `ChangeTracking.remove`.
            PlannedStatement(
                "ALTER FUNCTION \(ident: staging, ChangeTracking.function)() SET SCHEMA \(ident: retired)", lock: .none,
                summary: "move the change triggers' function to \(retired) with the old tables"
            ),
            PlannedStatement("ALTER SCHEMA \(ident: staging) RENAME TO \(ident: store)", lock: .none, summary: "install the new store as \(store)"),
            PlannedStatement("DROP VIEW \(ident: store, association)", lock: .accessExclusive, summary: "drop the association view"),
            PlannedStatement(
                "DROP TABLE \(ident: store, associationRows), \(ident: store, HeavyweightMigration.checkpointTable), \(ident: store, ChangeTracking.changesTable)",
                lock: .accessExclusive, summary: "drop the association and checkpoint tables and the change log"
            ),
        ]
        return statements
    }

    // MARK: Deferred constraints

    private func toOneColumns(_ table: TableLayout) -> [String] {
        table.columns.filter { if case .toOne = $0.role { return true } else { return false } }.map(\.name)
    }

    private func deferredNotNull(_ table: TableLayout) -> [String] {
        table.columns.filter { column in
            guard case .toOne = column.role else { return false }
            return !column.isNullable
        }.map(\.name)
    }

    /// The checks requiring a to-one column for some entities.
    private func deferredChecks(_ table: TableLayout) -> [CheckConstraint] {
        let columns = Set(toOneColumns(table))
        return table.checks.filter { $0.kind.requiredColumn.map(columns.contains) ?? false }
    }

    private func bare(_ table: TableLayout) -> TableLayout {
        var bare = table
        let deferred = Set(deferredChecks(table).map(\.name))
        bare.checks.removeAll { deferred.contains($0.name) }
        for index in bare.columns.indices where !bare.columns[index].isNullable {
            if case .toOne = bare.columns[index].role { bare.columns[index].isNullable = true }
        }
        return bare
    }
}
