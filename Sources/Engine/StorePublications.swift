import Foundation
import PostgresClient
import SQLBuilding

/// How a store is published for logical replication, carried across a swap or switch-over
/// that puts new tables (or a new schema) in place of the old ones (docs/replication.md):
/// - `FOR TABLES IN SCHEMA <store>` follows the schema's oid, so after a heavyweight swap it
///   would publish the backup `<store>~`: it is moved to the new `<store>`;
/// - a table's membership of a `FOR TABLE` list (its column list and row filter with it)
///   follows the table's oid: the new table of the same name joins (for a table a heavyweight
///   step renamed, the new tables of its new names: `renamed`), the old one leaves once the
///   swap is done (`leaving`);
/// - `REPLICA IDENTITY` other than the default is set on the new table;
/// - on a subscriber, a subscription's record of a table it writes into (`pg_subscription_rel`,
///   by oid: without it the apply worker skips the new table's changes, silently) is moved to
///   the new table, with its state. Catalog rows: this needs a superuser. Only for a subscriber
///   migrated alone: `apply --subscriber` refreshes the subscription instead, the supported way
///   (`SubscriptionRefresh`, which says why that cannot serve here).
/// A `FOR ALL TABLES` publication publishes the new tables by itself. All of it runs in the
/// caller's transaction (the swap's), so subscribers never see the store unpublished.
struct StorePublications {
    struct Membership {
        var publication: String
        var table: String
        var oid: String
        var columns: [String]?
        var rowFilter: String?
    }

    struct Identity {
        var table: String
        var oid: String
        /// `f` (full), `n` (nothing) or `i` (an index, `index`).
        var kind: String
        var index: String?
    }

    struct SubscribedTable {
        var subscription: String
        var table: String
        var oid: String
        var state: String
        var lsn: String?
    }

    var schemaOID: String?
    var schemaPublications: [String] = []
    var memberships: [Membership] = []
    var identities: [Identity] = []
    var subscribed: [SubscribedTable] = []
    /// Old tables the new store has under other names (`StagedWork.renamedTables`): their
    /// memberships and replica identities go to those tables.
    var renamed: [String: [String]] = [:]

    /// Reads how `schema` (or its `tables`) is published, runs `body` (which puts new tables or
    /// a new schema in their place under the same names, or under those `renamed` gives), then
    /// publishes the new ones so. In the caller's transaction. Without `subscriptionRecords`,
    /// the subscriptions' records stay as they are: the caller refreshes the subscriptions
    /// afterwards (`SubscriptionRefresh`).
    static func carrying<T>(
        schema: String, tables: [String]?, renamed: [String: [String]] = [:], subscriptionRecords: Bool = true,
        on connection: PostgresConnection, _ body: () throws -> T
    ) throws -> T {
        var published = try read(schema: schema, tables: tables, on: connection)
        published.renamed = renamed
        if !subscriptionRecords { published.subscribed = [] }
        let value = try body()
        let republished = try read(schema: schema, tables: tables, on: connection)
        for statement in try published.statements(after: republished, in: schema, on: connection) { _ = try connection.execute(statement) }
        return value
    }

    /// `FOR TABLES IN SCHEMA`, column lists and row filters came with PostgreSQL 15.
    static func hasSchemaPublications(on connection: PostgresConnection) throws -> Bool {
        (try connection.execute("SELECT current_setting('server_version_num')::int >= 150000 AS yes").bool(0, "yes")) == true
    }

    /// The schema's (when `tables` is nil) or only the tables'.
    static func read(schema: String, tables: [String]?, on connection: PostgresConnection) throws -> StorePublications {
        let modern = try hasSchemaPublications(on: connection)
        let namespace: SQL = "to_regnamespace(\(quoteIdentifier(schema)))"
        let chosen: SQL = tables.map { "AND c.relname IN (\(literals: $0))" } ?? ""
        var state = StorePublications()
        state.schemaOID = try connection.execute("SELECT \(namespace)::oid::text AS oid").value(0, "oid")
        if tables == nil, modern {
            state.schemaPublications = try connection.execute("""
                SELECT p.pubname FROM pg_publication_namespace pn JOIN pg_publication p ON p.oid = pn.pnpubid
                WHERE pn.pnnspid = \(namespace) ORDER BY p.pubname
                """).rows.compactMap { $0[0] }
        }
        let details: SQL = modern
            ? """
              pg_get_expr(r.prqual, r.prrelid) AS row_filter,
              (SELECT json_agg(a.attname ORDER BY a.attnum)::text FROM pg_attribute a WHERE a.attrelid = r.prrelid AND a.attnum = ANY (r.prattrs)) AS columns
              """
            : "NULL::text AS row_filter, NULL::text AS columns"
        let members = try connection.execute("""
            SELECT p.pubname, c.relname, c.oid::text AS oid, \(details)
            FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid JOIN pg_class c ON c.oid = r.prrelid
            WHERE c.relnamespace = \(namespace) AND c.relkind IN ('r', 'p') \(chosen)
            ORDER BY p.pubname, c.relname
            """)
        for row in members.rows.indices {
            let columns = try members.value(row, "columns").map { try JSONDecoder().decode([String].self, from: Data($0.utf8)) }
            state.memberships.append(Membership(
                publication: members.value(row, "pubname") ?? "", table: members.value(row, "relname") ?? "",
                oid: members.value(row, "oid") ?? "", columns: columns, rowFilter: members.value(row, "row_filter")
            ))
        }
        let identities = try connection.execute("""
            SELECT c.relname, c.oid::text AS oid, c.relreplident::text AS kind,
                   (SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = c.oid AND x.indisreplident) AS index
            FROM pg_class c WHERE c.relnamespace = \(namespace) AND c.relkind IN ('r', 'p') AND c.relreplident <> 'd' \(chosen)
            ORDER BY c.relname
            """)
        for row in identities.rows.indices {
            state.identities.append(Identity(
                table: identities.value(row, "relname") ?? "", oid: identities.value(row, "oid") ?? "",
                kind: identities.value(row, "kind") ?? "d", index: identities.value(row, "index")
            ))
        }
        let subscribed = try connection.execute("""
            SELECT s.oid::text AS subscription, c.relname, c.oid::text AS oid, r.srsubstate::text AS state, r.srsublsn::text AS lsn
            FROM pg_subscription_rel r JOIN pg_subscription s ON s.oid = r.srsubid JOIN pg_class c ON c.oid = r.srrelid
            WHERE c.relnamespace = \(namespace) AND c.relkind IN ('r', 'p') \(chosen)
              AND s.subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())
            ORDER BY s.subname, c.relname
            """)
        for row in subscribed.rows.indices {
            state.subscribed.append(SubscribedTable(
                subscription: subscribed.value(row, "subscription") ?? "", table: subscribed.value(row, "relname") ?? "",
                oid: subscribed.value(row, "oid") ?? "", state: subscribed.value(row, "state") ?? "r", lsn: subscribed.value(row, "lsn")
            ))
        }
        return state
    }

    /// The statements that give what is in `schema` now what `self` (read before the swap) had.
    func statements(after new: StorePublications, in schema: String, on connection: PostgresConnection) throws -> [SQL] {
        var statements: [SQL] = []
        if let old = schemaOID, let now = new.schemaOID, old != now {
            let renamed = try connection.execute("SELECT nspname FROM pg_namespace WHERE oid = \(old)::oid").value(0, "nspname")
            for publication in schemaPublications where !new.schemaPublications.contains(publication) {
                if let renamed { statements.append("ALTER PUBLICATION \(ident: publication) DROP TABLES IN SCHEMA \(ident: renamed)") }
                statements.append("ALTER PUBLICATION \(ident: publication) ADD TABLES IN SCHEMA \(ident: schema)")
            }
        }
        let current = try Self.tableOIDs(in: schema, on: connection)
        var added: Set<[String]> = []
        for member in memberships {
            for (name, oid) in successors(of: member.table, current: current) where oid != member.oid {
                let published = new.memberships.contains { $0.publication == member.publication && $0.oid == oid }
                guard !published, added.insert([member.publication, name]).inserted else { continue }
                var add: SQL = "ALTER PUBLICATION \(ident: member.publication) ADD TABLE \(ident: schema, name)"
                if let columns = member.columns {
                    add.append(SQL(unsafeRaw: " (" + columns.map(quoteIdentifier).joined(separator: ", ") + ")"))
                }
                // The filter as the catalog prints it, over columns of the same names.
                if let filter = member.rowFilter { add.append(SQL(unsafeRaw: " WHERE (\(filter))")) }
                statements.append(add)
            }
        }
        for identity in identities {
            for (name, oid) in successors(of: identity.table, current: current) where oid != identity.oid {
                let table: SQL = "\(ident: schema, name)"
                switch identity.kind {
                case "f": statements.append("ALTER TABLE \(table) REPLICA IDENTITY FULL")
                case "n": statements.append("ALTER TABLE \(table) REPLICA IDENTITY NOTHING")
                default:
                    guard let index = identity.index, try Self.hasIndex(index, on: oid, on: connection) else {
                        throw ReplicaIdentityLost(table: "\(schema).\(name)", index: identity.index ?? "?")
                    }
                    statements.append("ALTER TABLE \(table) REPLICA IDENTITY USING INDEX \(ident: index)")
                }
            }
        }
        for table in subscribed {
            guard let oid = current[table.table], oid != table.oid else { continue }
            statements.append("DELETE FROM pg_catalog.pg_subscription_rel WHERE srsubid = \(table.subscription)::oid AND srrelid IN (\(table.oid)::oid, \(oid)::oid)")
            statements.append("""
                INSERT INTO pg_catalog.pg_subscription_rel (srsubid, srrelid, srsubstate, srsublsn)
                VALUES (\(table.subscription)::oid, \(oid)::oid, \(table.state)::"char", \(table.lsn.map(SQLValue.text) ?? .null)::pg_lsn)
                """)
        }
        return statements
    }

    /// The tables in `schema` now (`current`, by name) that take `table`'s place: the one of its
    /// name, else those it was renamed to.
    private func successors(of table: String, current: [String: String]) -> [(name: String, oid: String)] {
        if let oid = current[table] { return [(table, oid)] }
        return (renamed[table] ?? []).compactMap { name in current[name].map { (name, $0) } }
    }

    /// The old tables' memberships, once they are in the backup (or retired) `schema`: taken
    /// out after the swap, when no write guard holds their locks (`StoreCleanup`).
    static func leaving(_ schema: String, on connection: PostgresConnection) throws -> [SQL] {
        let result = try connection.execute("""
            SELECT p.pubname, c.relname FROM pg_publication_rel r JOIN pg_publication p ON p.oid = r.prpubid JOIN pg_class c ON c.oid = r.prrelid
            WHERE c.relnamespace = to_regnamespace(\(quoteIdentifier(schema))) ORDER BY 1, 2
            """)
        return result.rows.indices.map { row in
            "ALTER PUBLICATION \(ident: result.value(row, "pubname") ?? "") DROP TABLE \(ident: schema, result.value(row, "relname") ?? "")"
        }
    }

    private static func tableOIDs(in schema: String, on connection: PostgresConnection) throws -> [String: String] {
        let result = try connection.execute("""
            SELECT relname, oid::text AS oid FROM pg_class WHERE relnamespace = to_regnamespace(\(quoteIdentifier(schema))) AND relkind IN ('r', 'p')
            """)
        var oids: [String: String] = [:]
        for row in result.rows.indices { oids[result.value(row, "relname") ?? ""] = result.value(row, "oid") }
        return oids
    }

    private static func hasIndex(_ index: String, on table: String, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("""
            SELECT EXISTS (SELECT 1 FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid WHERE x.indrelid = \(table)::oid AND i.relname = \(index)) AS yes
            """).bool(0, "yes") == true
    }
}

/// A table's `REPLICA IDENTITY USING INDEX` names an index the new table does not have:
/// logical replication of its updates and deletes would stop. The swap was rolled back.
public struct ReplicaIdentityLost: Error, CustomStringConvertible {
    public var table: String
    public var index: String

    public var description: String {
        "\(table) has REPLICA IDENTITY USING INDEX \(quoteIdentifier(index)), which the new table does not have; nothing was changed. "
            + "Set REPLICA IDENTITY DEFAULT or FULL before migrating, and the index identity again after (docs/replication.md)"
    }
}
