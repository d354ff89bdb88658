import Mapping
import ObjectModel
import SQLBuilding

/// Plans the catch-up round of an online heavyweight step (`OnlineCatchUp`):
/// 0. the rows reading a row written meanwhile through a to-one path join the keys
///    (`CatchUpKeyPaths`); the links of rows written meanwhile (`CatchUpLinks`): join table pairs go, owners of
///    ordered links are noted;
/// 1. per entity mapping, the destination rows made from the round's source keys are deleted;
///    association rows go only where the source row is gone or no longer passes the filter;
/// 2. per entity mapping in the step's order, stage 1 again for those keys (association of
///    new source rows, then the rows, set-based or streamed);
/// 3. stage 2 again: to-one columns of the rows made again, then to-many links whose owner or
///    linked row was made again.
/// An entity mapping in `rerunWhole` keeps its rows in the rounds before the write guard and
/// runs whole in the round under it (`WholeMappingRerun`).
struct CatchUpRound {
    var schemas: HeavyweightSchemas
    var forceStreaming: Bool

    /// Why the step cannot run online, or nil.
    static func refusal(_ mappings: [ResolvedEntityMapping], schemas: HeavyweightSchemas) -> OnlineRefusal? {
        CatchUpKeyPaths.refusal(mappings, schemas: schemas)
    }

    /// A round before the write guard, or with `underGuard` the last one, in which the entity
    /// mappings of `rerunWhole` run whole (the round's keys hold all of their source rows).
    func steps(_ mappings: [ResolvedEntityMapping], rerunWhole: Set<String> = [], underGuard: Bool = false) -> [OnlineCatchUp.CatchUpStep] {
        let keys = CatchUpKeys(staging: schemas.staging)
        let staging = schemas.staging, store = schemas.store
        let policies = CatchUpPolicies(schemas: schemas, keys: keys)
        let frozen = underGuard ? [] : rerunWhole
        var steps = (CatchUpKeyPaths(schemas: schemas, keys: keys).statements(mappings) + CatchUpLinks(schemas: schemas, keys: keys).statements(mappings))
            .map(CatchUpStep.statement)
        for mapping in mappings {
            if frozen.contains(mapping.name) {
                steps += WholeMappingRerun(schemas: schemas, keys: keys).unlink(mapping).map(CatchUpStep.statement)
                continue
            }
            steps += policies.forgetInsertedInstances(mapping, whole: rerunWhole.contains(mapping.name)).map(CatchUpStep.statement)
            let summary = "catch-up, \(mapping.name): drop the \(mapping.destinationEntity) rows made from \(mapping.sourceTable) rows written meanwhile"
            if mapping.keepsSourceKeys {
                steps.append(.statement(PlannedStatement("""
                    DELETE FROM \(ident: staging, mapping.destinationTable) AS d
                    WHERE d._entity = \(literal: mapping.destinationEntity) AND d._pk IN \(keys.of(mapping.sourceTable))
                    """, lock: .rowExclusive, summary: summary)))
                continue
            }
            steps.append(.statement(PlannedStatement("""
                DELETE FROM \(ident: staging, mapping.destinationTable) AS d USING \(ident: staging, schemas.associationRows) AS a
                WHERE a.entity_mapping = \(literal: mapping.name) AND a.destination_pk = d._pk AND a.source_pk IN \(keys.of(mapping.sourceTable))
                """, lock: .rowExclusive, summary: summary)))
            let (joins, condition) = schemas.sourceRows(mapping)
            steps.append(.statement(PlannedStatement("""
                DELETE FROM \(ident: staging, schemas.associationRows) AS a
                WHERE a.entity_mapping = \(literal: mapping.name) AND a.source_pk IN \(keys.of(mapping.sourceTable))
                  AND NOT EXISTS (SELECT 1 FROM \(ident: store, mapping.sourceTable) AS s\(joins.sql) WHERE s._pk = a.source_pk AND \(condition))
                """, lock: .rowExclusive, summary: "catch-up, \(mapping.name): forget the associations of source rows deleted or filtered out meanwhile")))
        }
        let stageOne = StageOneStatements(schemas: schemas)
        for mapping in mappings where !frozen.contains(mapping.name) {
            if !mapping.keepsSourceKeys { steps += stageOne.associate(mapping, only: keys).map(CatchUpStep.statement) }
            if forceStreaming || mapping.needsSwift {
                steps.append(.stream(stageOne.stream(mapping, only: keys)))
            } else {
                steps.append(.statement(stageOne.insertInstances(mapping, only: keys)))
            }
        }
        let stageTwo = StageTwoStatements(schemas: schemas)
        let sourceTables = Dictionary(mappings.map { ($0.name, $0.sourceTable) }) { first, _ in first }
        for mapping in mappings { steps += stageTwo.toOne(mapping, only: keys).map(CatchUpStep.statement) }
        for mapping in mappings {
            steps += stageTwo.toMany(mapping, only: keys, sourceTables: sourceTables).map(CatchUpStep.statement)
            if !frozen.contains(mapping.name) { steps += policies.createRelationships(mapping) }
        }
        return steps
    }

    typealias CatchUpStep = OnlineCatchUp.CatchUpStep
}
