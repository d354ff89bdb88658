import ObjectModel
import SQLBuilding

/// A join table of the new version written through its view: each pair written becomes the
/// pair of the same keys in the old version's join table, whose change the next round maps
/// forward (the pair is seen through the view after that round, not at once: a pair written
/// straight into staging could meet the round's own copy of it).
extension NewVersionWrites {
    struct JoinWrite: Sendable, Hashable {
        /// The store's join table (the old version's), and its columns holding the keys the
        /// view's owner and target columns hold.
        var oldTable: String
        var oldOwnerColumn: String
        var oldTargetColumn: String
        var ownerColumn: String
        var targetColumn: String
    }

    /// The pairs of `table` (a join table of `new`) written into the old version's join table
    /// of the same relationship, found through the reverse entity mappings' links, from
    /// either side. Both sides' rows must keep their keys; ordered links are not written.
    static func joinWrite(
        _ table: TableLayout, among mappings: [ResolvedEntityMapping], new: ModelVersion, keptFrom: (String) -> String?
    ) throws(NotWritten) -> JoinWrite {
        guard case .join(let entityName, let relationshipName) = table.kind, let owner = new.entity(named: entityName),
              let relationship = new.allRelationships(of: owner).first(where: { $0.name == relationshipName }),
              let target = new.entity(named: relationship.destination),
              let ownerColumn = table.columns.first(where: { $0.role == .joinOwner })?.name,
              let targetColumn = table.columns.first(where: { $0.role == .joinTarget })?.name else {
            throw NotWritten(reason: "a join table the new version does not describe")
        }
        if table.columns.contains(where: { if case .order = $0.role { return true }; return false }) {
            throw NotWritten(reason: "a join table of an ordered relationship: positions are not translated back")
        }
        guard let ownerKeys = keptFrom(StoreNaming.tableName(entity: new.root(of: owner).name)),
              let targetKeys = keptFrom(StoreNaming.tableName(entity: new.root(of: target).name)) else {
            throw NotWritten(reason: "a join table whose linked rows do not keep their keys in the step")
        }
        let inverse = new.inverse(of: relationship)
        var found: Set<[String]> = []
        for mapping in mappings {
            guard let source = new.entity(named: mapping.sourceEntity) else { continue }
            let ancestry = Set(new.ancestry(of: source).map(\.name) + [source.name])
            for link in mapping.toManyLinks {
                guard case .joinTable(let oldTable, let own, let other) = link.storage else { continue }
                let linked = mappings.first { $0.name == link.mappingName }?.destinationTable
                if ancestry.contains(owner.name), link.sourcePath == [relationship.name] {
                    guard link.orderColumn == nil, mapping.destinationTable == ownerKeys, linked == targetKeys else {
                        throw NotWritten(reason: "reverse entity mapping \(mapping.name): \(link.relationship) is ordered, or links rows that do not keep their keys")
                    }
                    found.insert([oldTable, own, other])
                } else if let inverse, ancestry.contains(target.name), link.sourcePath == [inverse.name] {
                    guard link.orderColumn == nil, mapping.destinationTable == targetKeys, linked == ownerKeys else {
                        throw NotWritten(reason: "reverse entity mapping \(mapping.name): \(link.relationship) is ordered, or links rows that do not keep their keys")
                    }
                    found.insert([oldTable, other, own])
                }
            }
        }
        guard found.count == 1, let pair = found.first else {
            throw NotWritten(reason: found.isEmpty
                ? "no reverse entity mapping maps \(owner.name).\(relationship.name) to a relationship kept in a join table"
                : "the reverse entity mappings map \(owner.name).\(relationship.name) to several join tables")
        }
        return JoinWrite(oldTable: pair[0], oldOwnerColumn: pair[1], oldTargetColumn: pair[2], ownerColumn: ownerColumn, targetColumn: targetColumn)
    }

    /// The function behind a written join table view's trigger: the pair goes into (or out of)
    /// the store's join table only.
    func joinFunction(for views: NewVersionViews, table: TableLayout) -> SQL? {
        guard let write = joins[table.name] else { return nil }
        // The pair's keys, into (or out of) `table`'s `owner` and `target` columns.
        func pairWrite(_ table: SQL, owner: String, target: String) -> SQL {
            """
            IF TG_OP IN ('UPDATE', 'DELETE') THEN
                DELETE FROM \(table) WHERE \(ident: owner) = OLD.\(ident: write.ownerColumn) AND \(ident: target) = OLD.\(ident: write.targetColumn);
            END IF;
            IF TG_OP = 'DELETE' THEN
                RETURN OLD;
            END IF;
            INSERT INTO \(table) (\(ident: owner), \(ident: target)) VALUES (NEW.\(ident: write.ownerColumn), NEW.\(ident: write.targetColumn));
            RETURN NEW;
            """
        }
        let body: SQL = """
            BEGIN
                \(views.switchOverTurn.writerShares)
                IF \(views.switchedOver) THEN
                    -- Switched over while this write waited: the store's join table is the new version's.
                    \(pairWrite("\(ident: views.store, table.name)", owner: write.ownerColumn, target: write.targetColumn))
                END IF;
                \(pairWrite("\(ident: views.store, write.oldTable)", owner: write.oldOwnerColumn, target: write.oldTargetColumn))
            END
            """
        return Self.triggerFunction(views, table: table, body: body)
    }
}
