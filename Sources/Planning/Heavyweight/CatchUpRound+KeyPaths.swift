import Mapping
import ObjectModel
import SQLBuilding

/// An entity mapping that reads a source row through to-one relationships (`$source.chef.name`
/// in an expression or the filter, a link or a policy function's object at the end of a longer
/// path) maps it from the rows along the path too: when one of those is written, the rows
/// reading it are mapped again. First in a round, before anything is deleted: the source rows
/// whose path leads, now, to a row whose key was logged join the round's keys. (Leading there
/// before is logged already: changing where a to-one points writes the row holding it, or,
/// for a one-to-one kept in the other row's column, `CatchUpPointedRows` logs the row it left.)
struct CatchUpKeyPaths {
    var schemas: HeavyweightSchemas
    var keys: CatchUpKeys

    /// The to-one paths `mapping` reads through, shortest first, as `SourceJoins` joins them.
    func joins(of mapping: ResolvedEntityMapping) -> SourceJoins {
        var joins = SourceJoins(schema: schemas.store, source: schemas.source, sourceEntity: schemas.sourceEntity(of: mapping))
        joins.add(mapping.filter?.joins ?? [])
        for attribute in mapping.attributes {
            joins.add(attribute.expression.joins)
            for object in attribute.expression.objects { joins.add(joins.key(of: object.relationships).joinPath) }
        }
        for link in mapping.toOneLinks { joins.add(joins.key(of: link.sourcePath).joinPath) }
        for link in mapping.toManyLinks { joins.add(joins.objects(at: link.sourcePath).joinPath) }
        return joins
    }

    /// Why a path of `mappings` cannot be traced back, or nil: a step kept neither in its own
    /// column nor in the other row's (a one-to-one owned by the other side, whose changes
    /// `CatchUpPointedRows` logs), which the checker rules out already.
    static func refusal(_ mappings: [ResolvedEntityMapping], schemas: HeavyweightSchemas) -> OnlineRefusal? {
        let paths = CatchUpKeyPaths(schemas: schemas, keys: CatchUpKeys(staging: schemas.staging))
        for mapping in mappings {
            let joins = paths.joins(of: mapping)
            for path in joins.paths {
                guard let (relationship, declaring, _) = joins.step(path) else { continue }
                switch StoreLayout.storage(of: relationship, in: declaring, version: schemas.source) {
                case .column: continue
                case .inverseColumn where schemas.source.inverse(of: relationship) != nil: continue
                default: return OnlineRefusal(.onlineUnsupportedUntracedPath, "entity mapping \(mapping.name) reads $source.\(path.joined(separator: ".")), a to-one kept in no column, whose changes cannot be traced to the rows reading it")
                }
            }
        }
        return nil
    }

    func statements(_ mappings: [ResolvedEntityMapping]) -> [PlannedStatement] {
        mappings.flatMap { mapping -> [PlannedStatement] in
            let joins = joins(of: mapping)
            return joins.paths.compactMap { path -> PlannedStatement? in
                guard let (_, _, target) = joins.step(path) else { return nil }
                let table = StoreNaming.tableName(entity: schemas.source.root(of: target).name)
                return PlannedStatement("""
                    INSERT INTO \(ident: schemas.staging, OnlineCatchUp.keysTable) (table_name, pk)
                    SELECT DISTINCT \(literal: mapping.sourceTable), s._pk FROM \(ident: schemas.store, mapping.sourceTable) AS s\(joins.sql)
                    WHERE \(ident: SourceJoins.alias(path), "_pk") IN \(keys.of(table))
                    ON CONFLICT DO NOTHING
                    """, lock: .rowExclusive, summary: "catch-up, \(mapping.name): rows reading $source.\(path.joined(separator: ".")) of a row written meanwhile")
            }
        }
    }
}
