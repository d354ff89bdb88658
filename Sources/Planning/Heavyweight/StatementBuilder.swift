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

    /// The staging schema and its tables: CREATE TABLE as `CreateStore` writes it, with to-one
    /// columns nullable and their required-checks left for stage 3 (rows get their links only
    /// in stage 2).
    func createStaging() -> [PlannedStatement] {
        var statements = [
            PlannedStatement("DROP SCHEMA IF EXISTS \(ident: staging) CASCADE", lock: .accessExclusive, summary: "drop a leftover \(staging)"),
            PlannedStatement("CREATE SCHEMA \(ident: staging)", lock: .none, summary: "create schema \(staging)"),
        ]
        for table in destination.tables {
            statements.append(PlannedStatement(
                CreateStore.createTable(bare(table), schema: staging), lock: .accessExclusive,
                summary: "create table \(staging).\(table.name)\(CreateStore.describe(table.kind))"
            ))
        }
        statements.append(PlannedStatement("""
            CREATE TABLE \(ident: staging, association) (
                entity_mapping text NOT NULL,
                source_pk bigint NOT NULL,
                destination_pk bigint NOT NULL,
                PRIMARY KEY (entity_mapping, source_pk)
            )
            """, lock: .accessExclusive, summary: "create the association table"))
        statements.append(PlannedStatement("""
            CREATE TABLE \(ident: staging, HeavyweightMigration.checkpointTable) (
                pass integer PRIMARY KEY,
                name text NOT NULL,
                fingerprint text NOT NULL,
                rows bigint NOT NULL,
                finished_at timestamptz NOT NULL DEFAULT clock_timestamp()
            )
            """, lock: .accessExclusive, summary: "create the checkpoint table"))
        return statements
    }

    /// Stage 1 of one entity mapping, first half: each source row passing the filter gets a new
    /// destination key, in source key order.
    func associate(_ mapping: ResolvedEntityMapping) -> [PlannedStatement] {
        guard let sourceEntity = source.entity(named: mapping.sourceEntity) else { preconditionFailure("resolved against this version") }
        let compiler = SQLExpressionCompiler(sourceAlias: SourceJoins.sourceAlias)
        var filterJoins = SourceJoins(schema: store, source: source, sourceEntity: sourceEntity)
        filterJoins.add(mapping.filter?.joins ?? [])
        var condition: SQL = "\(ident: SourceJoins.sourceAlias, "_entity") IN (\(literals: mapping.sourceEntities))"
        if let filter = mapping.filter { condition.append(" AND \(compiler.compile(filter))") }
        let sequence = quoteIdentifier(staging) + "." + quoteIdentifier(mapping.destinationTable)
        let associate: SQL = """
            INSERT INTO \(ident: staging, association) (entity_mapping, source_pk, destination_pk)
            SELECT \(literal: mapping.name), s._pk, nextval(pg_get_serial_sequence(\(literal: sequence), '_pk'))
            FROM \(ident: store, mapping.sourceTable) AS s\(filterJoins.sql)
            WHERE \(condition)
            ORDER BY s._pk
            """
        return [PlannedStatement(associate, lock: .rowExclusive, summary: "stage 1, \(mapping.name): associate each \(mapping.sourceEntities.joined(separator: "/")) row\(mapping.filter == nil ? "" : " passing the filter") with a new \(mapping.destinationEntity) key")]
    }

    /// Stage 1, second half, set-based: the destination rows with their attributes.
    func insertInstances(_ mapping: ResolvedEntityMapping) -> PlannedStatement {
        guard let sourceEntity = source.entity(named: mapping.sourceEntity) else { preconditionFailure("resolved against this version") }
        let compiler = SQLExpressionCompiler(sourceAlias: SourceJoins.sourceAlias)
        var valueJoins = SourceJoins(schema: store, source: source, sourceEntity: sourceEntity)
        for attribute in mapping.attributes { valueJoins.add(attribute.expression.joins) }
        // compile returns nil only for expressions needing Swift, which stream instead.
        let values = mapping.attributes.map { compiler.compile($0.expression)! }
        let columns = ["_pk", "_entity"] + mapping.attributes.map(\.column)
        let select: [SQL] = ["a.destination_pk", "\(literal: mapping.destinationEntity)"] + values
        let insert: SQL = """
            INSERT INTO \(ident: staging, mapping.destinationTable) (\(idents: columns))
            SELECT \(SQL.joined(select, separator: ", "))
            FROM \(ident: staging, association) AS a
            JOIN \(ident: store, mapping.sourceTable) AS s ON s._pk = a.source_pk\(valueJoins.sql)
            WHERE a.entity_mapping = \(literal: mapping.name)
            """
        return PlannedStatement(insert, lock: .rowExclusive, summary: "stage 1, \(mapping.name): insert \(mapping.destinationEntity) rows with their attributes")
    }

    /// Stage 1, second half, streaming: what the engine reads for each associated source row
    /// and computes in Swift. With a policy, the policy sees every stored attribute of the
    /// source object, not only those the expressions read.
    func stream(_ mapping: ResolvedEntityMapping) -> StreamedMapping {
        guard let sourceEntity = source.entity(named: mapping.sourceEntity) else { preconditionFailure("resolved against this version") }
        var joins = SourceJoins(schema: store, source: source, sourceEntity: sourceEntity)
        var references: [AttributeReference] = []
        if mapping.policy != nil {
            references += source.allAttributes(of: sourceEntity).filter { !$0.isTransient }.map { AttributeReference(relationships: [], attribute: $0) }
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
        let select: SQL = """
            SELECT \(SQL.joined(["a.destination_pk", "s._pk AS source_pk", "s._entity AS source_entity"] + values, separator: ", "))
            FROM \(ident: staging, association) AS a
            JOIN \(ident: store, mapping.sourceTable) AS s ON s._pk = a.source_pk\(joins.sql)
            WHERE a.entity_mapping = \(literal: mapping.name)
            ORDER BY a.destination_pk
            """
        let prune: SQL = """
            DELETE FROM \(ident: staging, association) AS a
            WHERE a.entity_mapping = \(literal: mapping.name)
              AND NOT EXISTS (SELECT 1 FROM \(ident: staging, mapping.destinationTable) AS d WHERE d._pk = a.destination_pk)
            """
        let attributes = destinationAttributes(of: mapping).map { attribute in
            StreamedMapping.StreamedAttribute(
                name: attribute.name, column: StoreNaming.columnName(attribute: attribute.name), type: attribute.type,
                expression: mapping.attributes.first { $0.column == StoreNaming.columnName(attribute: attribute.name) }?.expression
            )
        }
        return StreamedMapping(
            entityMapping: mapping.name, policy: mapping.policy, sourceEntity: mapping.sourceEntity,
            destinationEntity: mapping.destinationEntity, schema: staging, destinationTable: mapping.destinationTable,
            sourceRows: select,
            sourceValues: sourceValues,
            attributes: attributes, pruneAssociations: prune
        )
    }

    /// The destination entity's stored attributes, in model order.
    private func destinationAttributes(of mapping: ResolvedEntityMapping) -> [Attribute] {
        guard let version = destinationVersion, let entity = version.entity(named: mapping.destinationEntity) else { return [] }
        return version.allAttributes(of: entity).filter { !$0.isTransient }
    }

    /// Stage 2 of one entity mapping: each to-one column, set to the destination row the named
    /// entity mapping made from the source row the key path leads to.
    func stageTwo(_ mapping: ResolvedEntityMapping) -> [PlannedStatement] {
        guard let sourceEntity = source.entity(named: mapping.sourceEntity) else { preconditionFailure("resolved against this version") }
        return mapping.toOneLinks.map { link in
            var joins = SourceJoins(schema: store, source: source, sourceEntity: sourceEntity)
            let key = joins.key(of: link.sourcePath)
            joins.add(key.joinPath)
            let sql: SQL = """
                UPDATE \(ident: staging, mapping.destinationTable) AS d SET \(ident: link.column) = a2.destination_pk
                FROM \(ident: staging, association) AS a
                JOIN \(ident: store, mapping.sourceTable) AS s ON s._pk = a.source_pk\(joins.sql)
                JOIN \(ident: staging, association) AS a2 ON a2.entity_mapping = \(literal: link.mappingName) AND a2.source_pk = \(key.sql)
                WHERE a.entity_mapping = \(literal: mapping.name) AND d._pk = a.destination_pk
                """
            return PlannedStatement(sql, lock: .rowExclusive, summary: "stage 2, \(mapping.name): \(mapping.destinationTable).\(link.column) through \(link.mappingName) from $source.\(link.sourcePath.joined(separator: "."))")
        }
    }

    /// Stage 3: what `createStaging` left out, then the foreign keys, uniques and indexes as
    /// `CreateStore` writes them (its statements after the schema and the tables).
    func stageThree() -> [PlannedStatement] {
        var statements: [PlannedStatement] = []
        for table in destination.tables {
            for column in deferredNotNull(table) {
                statements.append(PlannedStatement(
                    "ALTER TABLE \(ident: staging, table.name) ALTER COLUMN \(ident: column) SET NOT NULL",
                    lock: .accessExclusive, summary: "stage 3: \(table.name).\(column) NOT NULL"
                ))
            }
            for check in deferredChecks(table) {
                statements.append(PlannedStatement(
                    "ALTER TABLE \(ident: staging, table.name) ADD CONSTRAINT \(ident: check.name) CHECK (\(unsafeRaw: check.expression))",
                    lock: .accessExclusive, summary: "stage 3: check \(check.name)"
                ))
            }
        }
        let constraints = CreateStore.statements(for: destination).dropFirst(1 + destination.tables.count)
        return statements + constraints.map { PlannedStatement($0.sql, lock: $0.lock, summary: "stage 3: " + $0.summary) }
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
            PlannedStatement("ALTER SCHEMA \(ident: staging) RENAME TO \(ident: store)", lock: .none, summary: "install the new store as \(store)"),
            PlannedStatement("DROP TABLE \(ident: store, association), \(ident: store, HeavyweightMigration.checkpointTable)", lock: .accessExclusive, summary: "drop the association and checkpoint tables"),
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

    /// The `<table>_<column>_required` checks of to-one columns.
    private func deferredChecks(_ table: TableLayout) -> [CheckConstraint] {
        let names = Set(toOneColumns(table).map { StoreNaming.shortened(table.name + "_" + $0 + "_required") })
        return table.checks.filter { names.contains($0.name) }
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

extension SQL.Interpolation {
    /// A comma-separated list of inline string literals.
    mutating func appendInterpolation(literals values: [String]) {
        appendInterpolation(unsafeRaw: values.map(quoteLiteral).joined(separator: ", "))
    }
}
