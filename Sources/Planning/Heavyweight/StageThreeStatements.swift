import Mapping
import ObjectModel
import SQLBuilding

/// Stage 3 of a heavyweight step: the constraints the staging tables were created without,
/// then those `CreateStore` writes after the tables, which validate every new row; then the
/// to-many counts no constraint keeps.
struct StageThreeStatements {
    var schemas: HeavyweightSchemas
    /// The tables whose statistics are read again before the checks: those stage 2 wrote
    /// (nil: every table).
    var analyzedTables: Set<String>? = nil

    func statements() -> [PlannedStatement] {
        (analyze().map { [$0] } ?? []) + deferred() + constraints() + countChecks()
    }

    /// Fresh statistics first, of the tables stage 2 wrote: autovacuum may have analyzed such a
    /// table while its to-one columns were still empty, and the foreign key checks would then
    /// plan a nested loop over every row. A table stage 1 filled whole needs none: its primary
    /// key, built after the rows, recorded its size, and the checks' joins plan from it.
    /// Nil when stage 2 wrote no table; the new store's statistics are then autovacuum's, as
    /// after a hand-written `INSERT … SELECT`.
    func analyze() -> PlannedStatement? {
        let tables = schemas.destination.tables.filter { analyzedTables?.contains($0.name) ?? true }
        guard !tables.isEmpty else { return nil }
        return PlannedStatement(
            "ANALYZE \(SQL.joined(tables.map { "\(ident: schemas.staging, $0.name)" }, separator: ", "))",
            lock: .shareUpdateExclusive, summary: "stage 3: statistics of the new tables for the checks"
        )
    }

    /// The NOT NULLs and checks of to-one columns, which stage 2 has set by now.
    func deferred() -> [PlannedStatement] {
        let staging = schemas.staging
        var statements: [PlannedStatement] = []
        for table in schemas.destination.tables {
            for column in DeferredConstraints.notNull(table) {
                statements.append(PlannedStatement(
                    "ALTER TABLE \(ident: staging, table.name) ALTER COLUMN \(ident: column) SET NOT NULL",
                    lock: .accessExclusive, summary: "stage 3: \(table.name).\(column) NOT NULL"
                ))
            }
            for check in DeferredConstraints.checks(table) {
                statements.append(PlannedStatement(
                    "ALTER TABLE \(ident: staging, table.name) ADD CONSTRAINT \(ident: check.name) CHECK (\(check.expression))",
                    lock: .accessExclusive, summary: "stage 3: check \(check.name)"
                ))
            }
        }
        return statements
    }

    /// What `CreateStore` writes after the tables: foreign keys, uniques and indexes.
    func constraints() -> [PlannedStatement] {
        let destination = schemas.destination
        return CreateStore.statements(for: destination).dropFirst(1 + destination.tables.count)
            .map { PlannedStatement($0.sql, lock: $0.lock, summary: "stage 3: " + $0.summary) }
    }

    /// Core Data's min/max counts of to-many relationships, which no constraint keeps: each
    /// counted per row of the entity (and its sub-entities), stopping the step naming the
    /// relationship, how many rows break it and the first keys. With `only`: the rows whose
    /// key is among those it gives for their table (`OnlineStageThree`: the logged ones).
    func countChecks(only keys: ((String) -> SQL)? = nil) -> [PlannedStatement] {
        guard let version = schemas.destinationVersion else { return [] }
        var statements: [PlannedStatement] = []
        for entity in version.entities {
            let table = StoreNaming.tableName(entity: version.root(of: entity).name)
            for relationship in entity.relationships where relationship.isToMany && (relationship.minCount > 0 || relationship.maxCount > 0) {
                guard let links = linkCount(of: relationship, in: entity, table: table, version: version) else { continue }
                var bounds: [SQL] = []
                if relationship.minCount > 0 { bounds.append("(\(links)) < \(literal: relationship.minCount)") }
                if relationship.maxCount > 0 { bounds.append("(\(links)) > \(literal: relationship.maxCount)") }
                let scope = version.hierarchy(of: entity).map(\.name)
                let offending: SQL = "\(ident: "_entity") IN (\(literals: scope)) AND (\(SQL.joined(bounds, separator: " OR ")))"
                let restricted: SQL = keys.map { "\(ident: "_pk") IN \($0(table)) AND \(offending)" } ?? offending
                let range = relationship.maxCount > 0 ? "\(relationship.minCount) to \(relationship.maxCount)" : "at least \(relationship.minCount)"
                let check = DataCheck(
                    table: table,
                    offending: restricted,
                    problem: "rows of \(entity.name) whose \(relationship.name) does not hold \(range) objects",
                    hint: "the destination model's count for \(entity.name).\(relationship.name); the old store is unchanged"
                )
                statements += check.statements(in: schemas.staging).map { PlannedStatement($0.sql, lock: $0.lock, summary: "stage 3: " + $0.summary) }
            }
        }
        return statements
    }

    /// `SELECT count(*)` of the rows linked to the owner row of `table` (the check's row), by
    /// where the relationship is stored; nil when it is stored as a column of this row.
    private func linkCount(of relationship: Relationship, in entity: Entity, table: String, version: ModelVersion) -> SQL? {
        let staging = schemas.staging
        let owner: SQL = "\(ident: staging, table).\(ident: "_pk")"
        switch StoreLayout.storage(of: relationship, in: entity, version: version) {
        case .inverseColumn:
            guard let inverse = version.inverse(of: relationship), let target = version.entity(named: relationship.destination),
                  let column = version.propertyColumns.column(ofProperty: inverse.name, of: target, in: version) else { return nil }
            let linked = StoreNaming.tableName(entity: version.root(of: target).name)
            return "SELECT count(*) FROM \(ident: staging, linked) AS l WHERE l.\(ident: column) = \(owner)"
        case .joinTable:
            let join = StoreNaming.joinTableName(entity: entity.name, relationship: relationship.name)
            return "SELECT count(*) FROM \(ident: staging, join) AS l WHERE l.\(ident: StoreNaming.foreignKeyColumnName(relationship: entity.name)) = \(owner)"
        case .inverseJoinTable:
            guard let inverse = version.inverse(of: relationship) else { return nil }
            let join = StoreNaming.joinTableName(entity: relationship.destination, relationship: inverse.name)
            return "SELECT count(*) FROM \(ident: staging, join) AS l WHERE l.\(ident: StoreNaming.foreignKeyColumnName(relationship: inverse.name)) = \(owner)"
        case .column, .none:
            return nil
        }
    }
}
