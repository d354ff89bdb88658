import Mapping
import ObjectModel
import SQLBuilding

/// An entity mapping whose policy's hooks cannot run again per catch-up round
/// (`CatchUpPolicies.rerunWhole`: a hook over the whole entity mapping, or no hooks declared)
/// runs again whole under the write guard, so that its hooks see the whole mapping once, on
/// the final data, as offline (docs/online-migrations.md):
/// 1. In the rounds before the guard, its rows stay as the bulk pass made them (its policy is
///    not called, its associations are kept): only the to-one columns of the rows made from a
///    logged key are cleared (`unlink`), since the rows they pointed at may be gone, and stage
///    2 sets those it can again; the rows other entity mappings made keep linking to its rows,
///    so stage 3's build finds every row its foreign keys need.
/// 2. Under the guard, the last round's keys take every source row it reads or associated
///    (`keys`), and the source rows of every entity mapping linking to one of them through a
///    to-one (`linkingRows`: made in the rounds before, such a row found no destination key
///    for a source row written meanwhile); the round runs it too
///    (`CatchUpRound.steps(underGuard:)`): every instance
///    its policy inserted goes, those of its whole-mapping hooks included; its rows go, each
///    association kept while its source row is there and passes the filter (so destination
///    keys stay what other rows link to); stage 1 and 2 run whole through the policy. The
///    rows of other entity mappings reading its source rows through a to-one path are mapped
///    again with it (`CatchUpKeyPaths`), as for any logged key.
struct WholeMappingRerun {
    var schemas: HeavyweightSchemas
    var keys: CatchUpKeys

    /// Before the guard: the to-one columns of `mapping`'s rows made from the round's keys.
    func unlink(_ mapping: ResolvedEntityMapping) -> [PlannedStatement] {
        guard let table = schemas.destination.tables.first(where: { $0.name == mapping.destinationTable }) else { return [] }
        let columns = DeferredConstraints.toOneColumns(table)
        guard !columns.isEmpty else { return [] }
        let staging = schemas.staging
        return [PlannedStatement("""
            UPDATE \(ident: staging, table.name) AS d SET \(SQL.joined(columns.map { "\(ident: $0) = NULL" }, separator: ", "))
            WHERE d._pk IN (SELECT destination_pk FROM \(ident: staging, schemas.associationRows) WHERE entity_mapping = \(literal: mapping.name) AND source_pk IN \(keys.of(mapping.sourceTable)))
            """, lock: .rowExclusive, summary: "catch-up, \(mapping.name): clear the links of its rows made from rows written meanwhile (mapped again whole under the write guard)")]
    }

    /// Under the guard, after `keys`: the source rows of `mapping` whose to-one link goes
    /// through one of `whole` to a source row among the round's keys.
    func linkingRows(_ mapping: ResolvedEntityMapping, to whole: [ResolvedEntityMapping]) -> [PlannedStatement] {
        mapping.toOneLinks.compactMap { link in
            guard let target = whole.first(where: { $0.name == link.mappingName }) else { return nil }
            var joins = SourceJoins(schema: schemas.store, source: schemas.source, sourceEntity: schemas.sourceEntity(of: mapping))
            let key = joins.key(of: link.sourcePath)
            joins.add(key.joinPath)
            return PlannedStatement("""
                INSERT INTO \(ident: schemas.staging, OnlineCatchUp.keysTable) (table_name, pk)
                SELECT DISTINCT \(literal: mapping.sourceTable), s._pk FROM \(ident: schemas.store, mapping.sourceTable) AS s\(joins.sql)
                WHERE \(key.sql) IN \(keys.of(target.sourceTable))
                ON CONFLICT DO NOTHING
                """, lock: .rowExclusive, summary: "catch-up, \(mapping.name): rows linking through $source.\(link.sourcePath.joined(separator: ".")) to rows \(target.name) maps again whole")
        }
    }

    /// Under the guard, after `keys`: statistics of the round's keys, which are now as many as
    /// the rows (without them the round's statements plan nested loops over them).
    func analyzeKeys() -> PlannedStatement {
        PlannedStatement(
            "ANALYZE \(ident: schemas.staging, OnlineCatchUp.keysTable)", lock: .shareUpdateExclusive,
            summary: "catch-up: statistics of the keys of the entity mappings run again whole"
        )
    }

    /// Under the guard, after the last round's keys: every source row `mapping` reads now or
    /// associated before.
    func keys(_ mapping: ResolvedEntityMapping) -> PlannedStatement {
        let staging = schemas.staging
        return PlannedStatement("""
            INSERT INTO \(ident: staging, OnlineCatchUp.keysTable) (table_name, pk)
            SELECT \(literal: mapping.sourceTable), s._pk FROM \(ident: schemas.store, mapping.sourceTable) AS s WHERE s._entity IN (\(literals: mapping.sourceEntities))
            UNION
            SELECT \(literal: mapping.sourceTable), a.source_pk FROM \(ident: staging, schemas.associationRows) AS a WHERE a.entity_mapping = \(literal: mapping.name)
            ON CONFLICT DO NOTHING
            """, lock: .rowExclusive, summary: "catch-up, \(mapping.name): every row it reads, to map again whole through its policy")
    }
}
