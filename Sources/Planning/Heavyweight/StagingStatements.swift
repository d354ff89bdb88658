import Mapping
import ObjectModel
import SQLBuilding

/// The prepare pass of a heavyweight step: the bare destination tables in the staging schema,
/// the key sequences of tables keeping their source keys, the association table and view, and
/// the log of writes to the staging tables by other sessions (`StagingWriteLog`).
struct StagingStatements {
    var schemas: HeavyweightSchemas

    /// The staging schema and its tables: CREATE TABLE as `CreateStore` writes it, with to-one
    /// columns nullable and their required-checks left for stage 3 (rows get their links only
    /// in stage 2); the tables in `bare` without their primary key, which stage 1 builds after
    /// their rows (`StageOneLoads`).
    func statements(_ mappings: [ResolvedEntityMapping], bare: Set<String> = []) -> [PlannedStatement] {
        let staging = schemas.staging, store = schemas.store
        // The schema itself, with the checkpoint table, comes from `ChangeTracking.install`.
        var statements: [PlannedStatement] = []
        for table in schemas.destination.tables {
            var created = DeferredConstraints.bare(table)
            if bare.contains(table.name) { created.primaryKey = [] }
            statements.append(PlannedStatement(
                CreateStore.createTable(created, schema: staging), lock: .accessExclusive,
                summary: "create table \(staging).\(table.name)\(CreateStore.describe(table.kind))"
            ))
        }
        statements += keySequences(mappings)
        statements.append(PlannedStatement("""
            CREATE TABLE \(ident: staging, schemas.associationRows) (
                entity_mapping text NOT NULL,
                source_pk bigint NOT NULL,
                destination_pk bigint NOT NULL,
                PRIMARY KEY (entity_mapping, source_pk)
            )
            """, lock: .accessExclusive, summary: "create the association table"))
        var branches: [SQL] = ["SELECT entity_mapping, source_pk, destination_pk FROM \(ident: staging, schemas.associationRows)"]
        for mapping in mappings where mapping.keepsSourceKeys {
            let (joins, condition) = schemas.sourceRows(mapping)
            branches.append("""
                SELECT \(literal: mapping.name)::text, s._pk, s._pk
                FROM \(ident: store, mapping.sourceTable) AS s\(joins.sql)
                WHERE \(condition)
                """)
        }
        statements.append(PlannedStatement("""
            CREATE VIEW \(ident: staging, schemas.association) (entity_mapping, source_pk, destination_pk) AS
            \(SQL.joined(branches, separator: "\nUNION ALL\n"))
            """, lock: .accessExclusive, summary: "create the association view (entity mappings keeping their source keys read the source rows)"))
        return statements + StagingWriteLog.install(staging: staging, tables: schemas.destination.tables.map(\.name))
    }

    /// Tables keeping their source keys: new keys (a policy's instances, the application's
    /// rows later) start after the largest. An online step sets them again before the swap,
    /// after the rows written meanwhile.
    func keySequences(_ mappings: [ResolvedEntityMapping]) -> [PlannedStatement] {
        let staging = schemas.staging, store = schemas.store
        var kept: [String: String] = [:]
        for mapping in mappings where mapping.keepsSourceKeys { kept[mapping.destinationTable] = mapping.sourceTable }
        return kept.sorted(by: { $0.key < $1.key }).map { table, sourceTable in
            PlannedStatement("""
                SELECT setval(pg_get_serial_sequence(\(literal: schemas.sequence(of: table)), '_pk'), greatest((SELECT max(_pk) FROM \(ident: store, sourceTable)), 1))
                """, lock: .accessShare, summary: "keys of \(staging).\(table) after those kept from \(store).\(sourceTable)")
        }
    }
}

/// The constraints of to-one columns the staging tables are created without, added by stage 3
/// once stage 2 has set the links: NOT NULL and the checks requiring them.
enum DeferredConstraints {
    static func toOneColumns(_ table: TableLayout) -> [String] {
        table.columns.filter { if case .toOne = $0.role { return true } else { return false } }.map(\.name)
    }

    static func notNull(_ table: TableLayout) -> [String] {
        table.columns.filter { column in
            guard case .toOne = column.role else { return false }
            return !column.isNullable
        }.map(\.name)
    }

    /// The checks requiring a to-one column for some entities.
    static func checks(_ table: TableLayout) -> [CheckConstraint] {
        let columns = Set(toOneColumns(table))
        return table.checks.filter { $0.kind.requiredColumn.map(columns.contains) ?? false }
    }

    /// `table` without its deferred constraints.
    static func bare(_ table: TableLayout) -> TableLayout {
        var bare = table
        let deferred = Set(checks(table).map(\.name))
        bare.checks.removeAll { deferred.contains($0.name) }
        for index in bare.columns.indices where !bare.columns[index].isNullable {
            if case .toOne = bare.columns[index].role { bare.columns[index].isNullable = true }
        }
        return bare
    }
}
