import Foundation
import JSONRendering
import Planning
import PostgresClient
import SQLBuilding

/// `orchestrator.expansions`: one row per store that serves two versions (`apply --expand`),
/// written in the switch-over's transaction and deleted in `complete`'s. It names the old
/// version, its views schema and the statements deferred to `complete`, in order
/// (docs/store-format.md, "Two versions live").
public struct ExpansionRecord: Sendable, Hashable {
    public var store: String
    public var oldVersion: String
    public var newVersion: String
    public var viewsSchema: String
    /// The deferred statements, in the order `complete` runs them.
    public var deferred: [DeferredStatement]
    /// UTC, ISO 8601 with milliseconds.
    public var expandedAt: String
    /// The views written through a reverse mapping model (a heavyweight expansion's).
    public var writtenTables: [String] = []

    public struct DeferredStatement: Sendable, Hashable {
        public var sql: String
        public var summary: String
    }

    public var inFlight: ExpansionInFlight {
        ExpansionInFlight(oldVersion: oldVersion, newVersion: newVersion, viewsSchema: viewsSchema, writtenTables: writtenTables)
    }

    /// The views of the schema `viewsSchema` names that have the `write` trigger
    /// (`NewVersionWrites`), as `written_tables`, comma-separated.
    static func writtenTables(viewsSchema: SQL) -> SQL {
        """
        (SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_trigger AS g JOIN pg_class AS c ON c.oid = g.tgrelid
         JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE n.nspname = \(viewsSchema) AND g.tgname = 'write') AS written_tables
        """
    }

    static func writtenTables(in result: QueryResult, row: Int = 0) -> [String] {
        result.value(row, "written_tables").map { $0.split(separator: ",").map(String.init) } ?? []
    }

    static let name = "expansions"

    static let table: SQL = """
        CREATE TABLE IF NOT EXISTS \(ident: MetadataSchema.schema, name) (
            store text PRIMARY KEY,
            old_version text NOT NULL,
            new_version text NOT NULL,
            views_schema text NOT NULL,
            deferred jsonb NOT NULL DEFAULT '[]',
            expanded_at timestamptz NOT NULL DEFAULT now()
        )
        """

    /// In the switch-over's transaction.
    static func insert(_ expansion: Expansion, store: String, on connection: PostgresConnection) throws {
        let deferred = JSONValue.array(expansion.deferred.map { .object([("sql", .string($0.sql.text)), ("summary", .string($0.summary))]) }).rendered
        try connection.execute("""
            INSERT INTO \(ident: MetadataSchema.schema, name) (store, old_version, new_version, views_schema, deferred)
            VALUES (\(store), \(expansion.oldVersion), \(expansion.newVersion), \(expansion.viewsSchema), \(deferred)::jsonb)
            """)
    }

    /// The expansion in flight of `store`, as one statement for a pipeline (`inFlight(in:)`
    /// reads its result); nil when the metadata has no expansions table.
    static func inFlightStatement(store: String, on connection: PostgresConnection) throws -> SQL? {
        guard try MetadataSchema.hasTable(name, on: connection) else { return nil }
        return "SELECT old_version, new_version, views_schema, \(writtenTables(viewsSchema: "views_schema")) FROM \(ident: MetadataSchema.schema, name) WHERE store = \(store)"
    }

    static func inFlight(in result: QueryResult) -> ExpansionInFlight? {
        guard !result.rows.isEmpty else { return nil }
        return ExpansionInFlight(
            oldVersion: result.value(0, "old_version") ?? "", newVersion: result.value(0, "new_version") ?? "",
            viewsSchema: result.value(0, "views_schema") ?? "", writtenTables: writtenTables(in: result)
        )
    }

    /// The store's expansion in flight; nil when there is none (or no metadata yet).
    public static func read(store: String, on connection: PostgresConnection) throws -> ExpansionRecord? {
        guard try MetadataSchema.hasTable(name, on: connection) else { return nil }
        let utc = "YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\""
        let result = try connection.execute("""
            SELECT old_version, new_version, views_schema, deferred::text AS deferred,
                   to_char(expanded_at AT TIME ZONE 'UTC', \(utc)) AS expanded_at, \(writtenTables(viewsSchema: "views_schema"))
            FROM \(ident: MetadataSchema.schema, name) WHERE store = \(store)
            """)
        guard !result.rows.isEmpty else { return nil }
        let text = result.value(0, "deferred") ?? "[]"
        let items = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: String]] ?? []
        return ExpansionRecord(
            store: store, oldVersion: result.value(0, "old_version") ?? "", newVersion: result.value(0, "new_version") ?? "",
            viewsSchema: result.value(0, "views_schema") ?? "", deferred: items.map { DeferredStatement(sql: $0["sql"] ?? "", summary: $0["summary"] ?? "") },
            expandedAt: result.value(0, "expanded_at") ?? "", writtenTables: writtenTables(in: result)
        )
    }

    static func delete(store: String, on connection: PostgresConnection) throws {
        try connection.execute("DELETE FROM \(ident: MetadataSchema.schema, name) WHERE store = \(store)")
    }
}
