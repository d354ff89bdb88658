import Mapping
import ObjectModel
import SQLBuilding

/// What a catch-up round adds for an entity mapping with a custom policy whose hooks run again
/// per round (declared per instance, `PolicyHook.isWholeMapping`: none of them, or run per
/// round by the policy's choice): the streamed stage 1 runs the policy's stage 1 hooks for the
/// round's source rows only, stage 2 its stage 2 hooks for the rows made from them. (Other
/// policies run again whole under the write guard: `WholeMappingRerun`.) Before that, the
/// instances the policy inserted (`insertInstance(of:)`) for those source rows go: the engine
/// records each under the source row being mapped in `<staging>._policy_instances` while an
/// online step runs (under none, NULL, when a hook over the whole entity mapping inserts it).
struct CatchUpPolicies {
    var schemas: HeavyweightSchemas
    var keys: CatchUpKeys

    /// The entity mappings whose policy runs again whole under the write guard, not per round
    /// (`WholeMappingRerun`): a policy declaring a hook over the whole entity mapping, or
    /// declaring none (a default implementation cannot be told from an override), unless it
    /// runs its hooks per catch-up round (`perRound`).
    static func rerunWhole(_ mappings: [ResolvedEntityMapping], policyHooks: [String: Set<PolicyHook>], perRound: Set<String>) -> [String] {
        mappings.compactMap { mapping in
            guard let policy = mapping.policy, !perRound.contains(policy) else { return nil }
            guard let hooks = policyHooks[policy] else { return mapping.name }
            return hooks.contains(where: \.isWholeMapping) ? mapping.name : nil
        }
    }

    /// The instances the policy of `mapping` inserted for the round's source rows, in every
    /// table of the new store, and their records; with `whole`, every instance it inserted,
    /// those of its hooks over the whole entity mapping too (recorded under no source row).
    func forgetInsertedInstances(_ mapping: ResolvedEntityMapping, whole: Bool = false) -> [PlannedStatement] {
        guard mapping.policy != nil else { return [] }
        let staging = schemas.staging
        let mine: SQL = whole
            ? "p.entity_mapping = \(literal: mapping.name)"
            : "p.entity_mapping = \(literal: mapping.name) AND p.source_pk IN \(keys.of(mapping.sourceTable))"
        let deletes = schemas.destination.tables.filter(\.kind.isHierarchy).map { table in
            PlannedStatement("""
                DELETE FROM \(ident: staging, table.name) AS d USING \(ident: staging, OnlineCatchUp.policyInstancesTable) AS p
                WHERE \(mine) AND p.destination_table = \(literal: table.name) AND d._pk = p.destination_pk
                """, lock: .rowExclusive, summary: "catch-up, \(mapping.name): drop the \(table.name) rows its policy inserted for rows written meanwhile")
        }
        return deletes + [PlannedStatement("""
            DELETE FROM \(ident: staging, OnlineCatchUp.policyInstancesTable) AS p WHERE \(mine)
            """, lock: .rowExclusive, summary: "catch-up, \(mapping.name): forget those instances")]
    }

    /// Stage 2's policy hook for the rows made from the round's source rows.
    func createRelationships(_ mapping: ResolvedEntityMapping) -> [OnlineCatchUp.CatchUpStep] {
        guard mapping.policy != nil else { return [] }
        return [.createRelationships(entityMapping: mapping.name, sourceKeys: keys.of(mapping.sourceTable))]
    }

    /// Under the write guard, the key sequences of tables keeping their source keys: after
    /// every row of the source table and of the new table (a policy's instances there took
    /// their keys from the source table's sequence, as the application's rows did meanwhile).
    func keySequences(_ mappings: [ResolvedEntityMapping]) -> [PlannedStatement] {
        let staging = schemas.staging, store = schemas.store
        return Self.keptKeys(mappings).sorted(by: { $0.key < $1.key }).map { table, sourceTable in
            PlannedStatement("""
                SELECT setval(pg_get_serial_sequence(\(literal: schemas.sequence(of: table)), '_pk'), greatest((SELECT max(_pk) FROM \(ident: store, sourceTable)), (SELECT max(_pk) FROM \(ident: staging, table)), 1))
                """, lock: .accessShare, summary: "keys of \(staging).\(table) after those kept from \(store).\(sourceTable)")
        }
    }

    /// Tables of the new store keeping their source rows' keys, with the source table of each.
    static func keptKeys(_ mappings: [ResolvedEntityMapping]) -> [String: String] {
        var kept: [String: String] = [:]
        for mapping in mappings where mapping.keepsSourceKeys { kept[mapping.destinationTable] = mapping.sourceTable }
        return kept
    }
}
