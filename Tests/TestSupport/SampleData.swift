import ObjectModel
import Planning
import SQLBuilding

/// Fills a store with generated rows: `rowsPerEntity` rows of every concrete entity, every
/// attribute set by its type (optional ones NULL on every fifth row), every relationship linked.
/// Used by tests and benchmarks to prove migrations on stores holding rows.
public enum SampleData {
    public struct Unsupported: Error, CustomStringConvertible {
        public var description: String
    }

    /// Statements to run in order on an empty store of `version` in `schema`.
    ///
    /// 1. Entities are filled in an order where every required to-one finds its destination
    ///    rows already there (entity by entity: two hierarchies may need each other's rows, each
    ///    for a different sub-entity); those columns are set in the INSERT itself.
    /// 2. Optional to-ones are set afterwards (NULL on every seventh row).
    /// 3. Join tables get two links per source row; order columns count from 0.
    public static func statements(for version: ModelVersion, schema: String, rowsPerEntity: Int) throws -> [SQL] {
        let layout = StoreLayout(version: version, schema: schema)
        let columns = PropertyColumns(version: version)
        var statements: [SQL] = []
        for entity in try fillOrder(version) {
            let table = StoreNaming.tableName(entity: version.root(of: entity).name)
            statements.append(insert(entity, table: table, version: version, columns: columns, schema: schema, rows: rowsPerEntity))
        }
        for entity in version.entities where !entity.isAbstract {
            let table = StoreNaming.tableName(entity: version.root(of: entity).name)
            for relationship in version.allRelationships(of: entity) where relationship.isOptional
                && StoreLayout.storage(of: relationship, in: declaringEntity(of: relationship, from: entity, in: version), version: version) == .column {
                statements.append(linkToOne(entity: entity, relationship: relationship, table: table, version: version, columns: columns, schema: schema, skipEvery: 7))
            }
        }
        for table in layout.tables {
            guard case .join(let owner, let name) = table.kind, let entity = version.entity(named: owner),
                  let relationship = entity.relationship(named: name) else { continue }
            statements.append(linkJoinTable(table, entity: entity, relationship: relationship, version: version, schema: schema))
        }
        for table in layout.tables {
            for column in table.columns {
                guard case .order(let owner, let name) = column.role, case .hierarchy = table.kind,
                      let relationship = version.entity(named: owner)?.relationship(named: name),
                      let inverse = version.inverse(of: relationship), let target = version.entity(named: relationship.destination),
                      let foreignKey = columns.column(ofProperty: inverse.name, of: target, in: version) else { continue }
                statements.append("""
                    UPDATE \(ident: schema, table.name) AS x SET \(ident: column.name) = o.position
                    FROM (SELECT _pk, (row_number() OVER (PARTITION BY \(ident: foreignKey) ORDER BY _pk) - 1)::integer AS position
                          FROM \(ident: schema, table.name) WHERE \(ident: foreignKey) IS NOT NULL) o
                    WHERE x._pk = o._pk
                    """)
            }
        }
        return statements
    }

    static func declaringEntity(of relationship: Relationship, from entity: Entity, in version: ModelVersion) -> Entity {
        version.ancestry(of: entity).last { $0.relationships.contains { $0.name == relationship.name } } ?? entity
    }

    /// Concrete entities ordered so that required to-one destinations come first.
    static func fillOrder(_ version: ModelVersion) throws -> [Entity] {
        let concrete = version.entities.filter { !$0.isAbstract }
        var dependencies: [String: Set<String>] = [:]
        for entity in concrete {
            var needs: Set<String> = []
            for relationship in version.allRelationships(of: entity) where !relationship.isOptional
                && StoreLayout.storage(of: relationship, in: declaringEntity(of: relationship, from: entity, in: version), version: version) == .column {
                let destination = version.entity(named: relationship.destination)!
                let root = version.root(of: destination).name
                if root == version.root(of: entity).name { continue }
                needs.formUnion(version.hierarchy(of: destination).filter { !$0.isAbstract }.map(\.name))
            }
            dependencies[entity.name] = needs
        }
        var ordered: [Entity] = []
        var done: Set<String> = []
        while ordered.count < concrete.count {
            guard let next = concrete.first(where: { !done.contains($0.name) && dependencies[$0.name]!.isSubset(of: done) }) else {
                let stuck = concrete.filter { !done.contains($0.name) }.map(\.name)
                throw Unsupported(description: "required to-one relationships form a cycle among \(stuck.joined(separator: ", "))")
            }
            ordered.append(next)
            done.insert(next.name)
        }
        return ordered
    }

    static func insert(_ entity: Entity, table: String, version: ModelVersion, columns stored: PropertyColumns, schema: String, rows: Int) -> SQL {
        var columns = ["_entity"]
        var values: [SQL] = ["\(literal: entity.name)"]
        var sources: [SQL] = ["generate_series(1, \(unsafeRaw: String(rows))) AS g"]
        for attribute in version.allAttributes(of: entity) where !attribute.isTransient {
            columns.append(stored.column(ofProperty: attribute.name, of: entity, in: version)!)
            let value = valueExpression(attribute, entity: entity)
            values.append(attribute.isOptional ? "CASE WHEN g % 5 = 0 THEN NULL ELSE \(value) END" : value)
        }
        for relationship in version.allRelationships(of: entity) where !relationship.isOptional
            && StoreLayout.storage(of: relationship, in: declaringEntity(of: relationship, from: entity, in: version), version: version) == .column {
            let destination = version.entity(named: relationship.destination)!
            let alias = "d\(sources.count)"
            columns.append(stored.column(ofProperty: relationship.name, of: entity, in: version)!)
            values.append("\(ident: alias)._pk")
            let destinationTable = StoreNaming.tableName(entity: version.root(of: destination).name)
            let names = concreteNames(destination, version)
            sources.append("""
                JOIN (SELECT _pk, row_number() OVER (ORDER BY _pk) AS n FROM \(ident: schema, destinationTable)
                      WHERE _entity IN (\(unsafeRaw: names))) AS \(ident: alias)
                  ON \(ident: alias).n = ((g - 1) % GREATEST((SELECT count(*) FROM \(ident: schema, destinationTable)
                      WHERE _entity IN (\(unsafeRaw: names))), 1)) + 1
                """)

        }
        var sql: SQL = "INSERT INTO \(ident: schema, table) (\(idents: columns)) SELECT "
        sql.append(SQL.joined(values, separator: ", "))
        sql.append(" FROM ")
        sql.append(SQL.joined(sources, separator: " "))
        return sql
    }

    static func concreteNames(_ entity: Entity, _ version: ModelVersion) -> String {
        let names = version.hierarchy(of: entity).filter { !$0.isAbstract }.map(\.name)
        return (names.isEmpty ? [entity.name] : names).map(quoteLiteral).joined(separator: ", ")
    }

    /// A deterministic value of the attribute's type for row `g`.
    static func valueExpression(_ attribute: Attribute, entity: Entity) -> SQL {
        let label = quoteLiteral("\(entity.name).\(attribute.name) ")
        switch attribute.type {
        case .integer16: return "(g % 32000)::smallint"
        case .integer32: return "g::integer"
        case .integer64: return "(g * 1000)::bigint"
        case .decimal: return "(g * 1.25)::numeric"
        case .double: return "(g * 0.5)::double precision"
        case .float: return "(g * 0.25)::real"
        case .string: return "\(unsafeRaw: label) || g"
        case .uri: return "'https://example.com/' || g"
        case .boolean: return "(g % 2 = 0)"
        case .date: return "timestamptz '2020-01-01 00:00:00+00' + g * interval '1 minute'"
        case .binaryData, .transformable: return "decode(md5(\(unsafeRaw: label) || g), 'hex')"
        case .uuid: return "md5(\(unsafeRaw: label) || g)::uuid"
        case .undefined: return "NULL"
        }
    }

    static func linkToOne(
        entity: Entity, relationship: Relationship, table: String, version: ModelVersion, columns: PropertyColumns, schema: String, skipEvery: Int
    ) -> SQL {
        let destination = version.entity(named: relationship.destination)!
        let destinationTable = StoreNaming.tableName(entity: version.root(of: destination).name)
        let column = columns.column(ofProperty: relationship.name, of: entity, in: version)!
        return """
            UPDATE \(ident: schema, table) AS x SET \(ident: column) = d._pk
            FROM (SELECT _pk, row_number() OVER (ORDER BY _pk) AS n FROM \(ident: schema, destinationTable)
                  WHERE _entity IN (\(unsafeRaw: concreteNames(destination, version)))) AS d,
                 (SELECT count(*) AS c FROM \(ident: schema, destinationTable) WHERE _entity IN (\(unsafeRaw: concreteNames(destination, version)))) AS total
            WHERE x._entity = \(literal: entity.name) AND x._pk % \(unsafeRaw: String(skipEvery)) <> 0
              AND d.n = (x._pk % GREATEST(total.c, 1)) + 1
            """
    }

    static func linkJoinTable(_ table: TableLayout, entity: Entity, relationship: Relationship, version: ModelVersion, schema: String) -> SQL {
        let destination = version.entity(named: relationship.destination)!
        let ownerTable = StoreNaming.tableName(entity: version.root(of: entity).name)
        let destinationTable = StoreNaming.tableName(entity: version.root(of: destination).name)
        let ownerColumn = table.columns[0].name, targetColumn = table.columns[1].name
        let orderColumns = table.columns.dropFirst(2).map(\.name)
        var columns = [ownerColumn, targetColumn]
        var orderValues = ""
        for _ in orderColumns { orderValues += ", link.k" }
        columns += orderColumns
        return """
            INSERT INTO \(ident: schema, table.name) (\(idents: columns))
            SELECT DISTINCT ON (o._pk, d._pk) o._pk, d._pk\(unsafeRaw: orderValues)
            FROM (SELECT _pk, row_number() OVER (ORDER BY _pk) AS n FROM \(ident: schema, ownerTable)
                  WHERE _entity IN (\(unsafeRaw: concreteNames(entity, version)))) AS o
            CROSS JOIN (VALUES (0), (1)) AS link(k)
            JOIN (SELECT _pk, row_number() OVER (ORDER BY _pk) AS n FROM \(ident: schema, destinationTable)
                  WHERE _entity IN (\(unsafeRaw: concreteNames(destination, version)))) AS d
              ON d.n = ((o.n + link.k) % GREATEST((SELECT count(*) FROM \(ident: schema, destinationTable)
                  WHERE _entity IN (\(unsafeRaw: concreteNames(destination, version)))), 1)) + 1
            ORDER BY o._pk, d._pk
            """
    }
}
