import Planning
import PostgresClient
import SQLBuilding

/// Reads `CarriedAccess` from the catalog: owners and comments, ACLs through `aclexplode`
/// (`pg_namespace.nspacl`, `pg_class.relacl`, `pg_attribute.attacl`), the owner's own entries
/// left out. Used around a heavyweight swap and an online switch-over (`carrying`).
enum StoreAccess {
    /// The schema (when `tables` is nil) and its tables and sequences, or only the tables named
    /// and the sequences they own (their identity sequences).
    static func read(schema: String, tables: [String]?, on connection: PostgresConnection) throws -> CarriedAccess {
        let namespace: SQL = "to_regnamespace(\(quoteIdentifier(schema)))"
        let chosen: SQL
        if let tables {
            chosen = """
                AND (c.relname IN (\(literals: tables)) OR EXISTS (
                    SELECT 1 FROM pg_depend d JOIN pg_class t ON t.oid = d.refobjid
                    WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.refclassid = 'pg_class'::regclass
                      AND d.deptype IN ('a', 'i') AND t.relname IN (\(literals: tables))))
                """
        } else {
            chosen = ""
        }
        let relations = try connection.execute("""
            SELECT c.relname, c.relkind::text AS kind, pg_get_userbyid(c.relowner) AS owner, obj_description(c.oid, 'pg_class') AS comment,
                   CASE WHEN x.grantee = 0 THEN NULL ELSE pg_get_userbyid(x.grantee) END AS grantee, x.privilege_type, x.is_grantable
            FROM pg_class c LEFT JOIN LATERAL aclexplode(c.relacl) x ON x.grantee <> c.relowner
            WHERE c.relnamespace = \(namespace) AND c.relkind IN ('r', 'p', 'S') \(chosen)
            ORDER BY c.relname, x.grantee, x.privilege_type
            """)
        let columns = try connection.execute("""
            SELECT c.relname, a.attname, col_description(c.oid, a.attnum) AS comment,
                   CASE WHEN x.grantee = 0 THEN NULL ELSE pg_get_userbyid(x.grantee) END AS grantee, x.privilege_type, x.is_grantable
            FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            LEFT JOIN LATERAL aclexplode(a.attacl) x ON x.grantee <> c.relowner
            WHERE c.relnamespace = \(namespace) AND c.relkind IN ('r', 'p') \(chosen)
            ORDER BY c.relname, a.attnum, x.grantee, x.privilege_type
            """)
        var byName: [String: CarriedAccess.Relation] = [:]
        var order: [String] = []
        for row in relations.rows.indices {
            let name = relations.value(row, "relname") ?? ""
            if byName[name] == nil {
                order.append(name)
                byName[name] = CarriedAccess.Relation(
                    name: name, kind: relations.value(row, "kind") == "S" ? .sequence : .table, owner: relations.value(row, "owner") ?? "",
                    privileges: [], comment: relations.value(row, "comment"), columns: []
                )
            }
            if let privilege = try privilege(relations, row, of: schema + "." + name) { byName[name]!.privileges.append(privilege) }
        }
        for row in columns.rows.indices {
            let table = columns.value(row, "relname") ?? "", name = columns.value(row, "attname") ?? ""
            guard byName[table] != nil else { continue }
            if byName[table]!.columns.last?.name != name {
                byName[table]!.columns.append(CarriedAccess.Column(name: name, privileges: [], comment: columns.value(row, "comment")))
            }
            if let privilege = try privilege(columns, row, of: "\(schema).\(table).\(name)") {
                byName[table]!.columns[byName[table]!.columns.count - 1].privileges.append(privilege)
            }
        }
        return CarriedAccess(schema: tables == nil ? try readSchema(schema, on: connection) : nil, relations: order.map { byName[$0]! })
    }

    private static func readSchema(_ schema: String, on connection: PostgresConnection) throws -> CarriedAccess.Relation? {
        let result = try connection.execute("""
            SELECT pg_get_userbyid(n.nspowner) AS owner, obj_description(n.oid, 'pg_namespace') AS comment,
                   CASE WHEN x.grantee = 0 THEN NULL ELSE pg_get_userbyid(x.grantee) END AS grantee, x.privilege_type, x.is_grantable
            FROM pg_namespace n LEFT JOIN LATERAL aclexplode(n.nspacl) x ON x.grantee <> n.nspowner
            WHERE n.oid = to_regnamespace(\(quoteIdentifier(schema)))
            ORDER BY x.grantee, x.privilege_type
            """)
        guard !result.rows.isEmpty else { return nil }
        var relation = CarriedAccess.Relation(
            name: schema, kind: .table, owner: result.value(0, "owner") ?? "", privileges: [], comment: result.value(0, "comment"), columns: []
        )
        for row in result.rows.indices {
            if let privilege = try privilege(result, row, of: schema) { relation.privileges.append(privilege) }
        }
        return relation
    }

    private static func privilege(_ result: QueryResult, _ row: Int, of object: String) throws -> CarriedAccess.Privilege? {
        guard let privilege = result.value(row, "privilege_type") else { return nil }
        guard CarriedAccess.privilegeKeywords.contains(privilege) else { throw UnknownPrivilege(object: object, privilege: privilege) }
        return CarriedAccess.Privilege(grantee: result.value(row, "grantee"), privilege: privilege, isGrantable: result.bool(row, "is_grantable") == true)
    }

    /// Reads what `schema` (or its `tables`) has now, runs `body` (the swap or switch-over, which
    /// puts new objects in their place under the same names), then gives the new objects what
    /// the old ones had: access, and how they are published (`StorePublications`, also by the
    /// new tables of a table `renamed` gives other names; the subscriptions' records of the
    /// tables too, unless `options.refreshesSubscriptionsAfter`).
    /// In the caller's transaction.
    static func carrying<T>(
        schema: String, tables: [String]?, renamed: [String: [String]] = [:], options: ApplyOptions, on connection: PostgresConnection, _ body: () throws -> T
    ) throws -> T {
        if tables?.isEmpty == true { return try body() }
        let old = try read(schema: schema, tables: tables, on: connection)
        let value = try StorePublications.carrying(
            schema: schema, tables: tables, renamed: renamed, subscriptionRecords: !options.refreshesSubscriptionsAfter, on: connection, body
        )
        let new = try read(schema: schema, tables: tables, on: connection)
        for statement in old.statements(to: new, in: schema) { _ = try connection.execute(statement.sql) }
        return value
    }
}

/// An ACL holds a privilege this version does not know how to grant again.
struct UnknownPrivilege: Error, CustomStringConvertible {
    var object: String
    var privilege: String

    var description: String {
        "\(object) has the privilege \(privilege), which the migration cannot carry to the new store; revoke it before migrating and grant it again afterwards"
    }
}
