import Mapping
import ObjectModel
import SQLBuilding

/// The first statements of a catch-up round, before any destination row or association goes:
/// what lets stage 2 restricted to the round's keys give the links of the whole store again.
/// 1. Ordered to-many links: the owners of a pair whose linked row was made from a logged key,
///    in the staging rows (pairs about to go) and in the source rows now (pairs about to come),
///    into `_catch_up_owners`; stage 2 then numbers every link of those owners again, not only
///    the restricted ones (a position counts the owner's other links).
/// 2. Join tables: the pairs whose owner or linked row was made from a logged key are deleted;
///    stage 2 inserts those the source holds now. (A link kept in the linked row's column goes
///    with that row, which was logged when the column changed.)
struct CatchUpLinks {
    var schemas: HeavyweightSchemas
    var keys: CatchUpKeys

    func statements(_ mappings: [ResolvedEntityMapping]) -> [PlannedStatement] {
        let byName = Dictionary(mappings.map { ($0.name, $0) }) { first, _ in first }
        var owners: [PlannedStatement] = []
        var pairs: [PlannedStatement] = []
        for mapping in mappings {
            for link in mapping.toManyLinks {
                let linked = byName[link.mappingName] ?? mapping
                if link.orderColumn != nil { owners += numberedAgain(mapping, link, linked: linked) }
                if case .joinTable(let table, let ownColumn, let otherColumn) = link.storage {
                    pairs.append(PlannedStatement("""
                        DELETE FROM \(ident: schemas.staging, table) AS j
                        WHERE j.\(ident: ownColumn) IN \(madeFromKeys(mapping)) OR j.\(ident: otherColumn) IN \(madeFromKeys(linked))
                        """, lock: .rowExclusive, summary: "catch-up, \(mapping.name): drop the \(table) pairs of rows written meanwhile"))
                }
            }
        }
        guard !owners.isEmpty || !pairs.isEmpty else { return [] }
        let clear = owners.isEmpty ? [] : [PlannedStatement(
            "TRUNCATE \(ident: schemas.staging, OnlineCatchUp.ownersTable)", lock: .accessExclusive, summary: "catch-up: no owner to number again yet"
        )]
        return clear + owners + pairs
    }

    /// The join tables of the new store the links of `mappings` fill, sorted.
    static func joinTables(_ mappings: [ResolvedEntityMapping]) -> [String] {
        let tables = mappings.flatMap(\.toManyLinks).compactMap { link -> String? in
            if case .joinTable(let table, _, _) = link.storage { return table }
            return nil
        }
        return Set(tables).sorted()
    }

    /// The name of a link in `_catch_up_owners`.
    static func name(_ mapping: ResolvedEntityMapping, _ link: ResolvedEntityMapping.ToManyLink) -> String {
        mapping.name + "." + link.relationship
    }

    /// The destination keys `mapping` made from the round's source keys (before the round
    /// forgets the associations of source rows deleted meanwhile).
    func madeFromKeys(_ mapping: ResolvedEntityMapping) -> SQL {
        if mapping.keepsSourceKeys { return keys.of(mapping.sourceTable) }
        return """
            (SELECT destination_pk FROM \(ident: schemas.staging, schemas.associationRows) WHERE entity_mapping = \(literal: mapping.name) AND source_pk IN \(keys.of(mapping.sourceTable)))
            """
    }

    private func numberedAgain(_ mapping: ResolvedEntityMapping, _ link: ResolvedEntityMapping.ToManyLink, linked: ResolvedEntityMapping) -> [PlannedStatement] {
        let staging = schemas.staging
        let name = Self.name(mapping, link)
        let (table, ownColumn, otherColumn): (String, String, String)
        switch link.storage {
        case .joinTable(let joinTable, let own, let other): (table, ownColumn, otherColumn) = (joinTable, own, other)
        case .inverseColumn(let linkedTable, let column): (table, ownColumn, otherColumn) = (linkedTable, column, "_pk")
        }
        var joins = SourceJoins(schema: schemas.store, source: schemas.source, sourceEntity: schemas.sourceEntity(of: mapping))
        let objects = joins.objects(at: link.sourcePath)
        joins.add(objects.joinPath)
        let summary = "catch-up, \(mapping.name): owners whose \(mapping.destinationEntity).\(link.relationship) positions change"
        return [
            PlannedStatement("""
                INSERT INTO \(ident: staging, OnlineCatchUp.ownersTable) (link, pk)
                SELECT DISTINCT \(literal: name), j.\(ident: ownColumn) FROM \(ident: staging, table) AS j
                WHERE j.\(ident: ownColumn) IS NOT NULL AND j.\(ident: otherColumn) IN \(madeFromKeys(linked))
                ON CONFLICT DO NOTHING
                """, lock: .rowExclusive, summary: summary + " (links they had)"),
            PlannedStatement("""
                INSERT INTO \(ident: staging, OnlineCatchUp.ownersTable) (link, pk)
                SELECT DISTINCT \(literal: name), a.destination_pk
                FROM \(ident: staging, schemas.association) AS a
                JOIN \(ident: schemas.store, mapping.sourceTable) AS s ON s._pk = a.source_pk\(joins.sql)\(objects.join)
                WHERE a.entity_mapping = \(literal: mapping.name) AND \(objects.key) IN \(keys.of(linked.sourceTable))
                ON CONFLICT DO NOTHING
                """, lock: .rowExclusive, summary: summary + " (links they have)"),
        ]
    }
}
