import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
@testable import Engine

/// Helpers of the old-version view tests: a store at the first version with rows, migrated to
/// the second by today's `apply`, then the first served through its generated views.
enum ServedVersion {
    typealias S = MigratedStore
    static let schema = "shop@v1"

    /// The store at v1 with `rows` rows per entity; `body` gets the v1 rows of each table
    /// listed (`table: [columns]`, `_pk` first, as `S.rows` reads them) taken before the
    /// migration, then runs after v1's views are created.
    static func withServed(
        _ model: VersionedModel, rows: Int = 20, allowDataLoss: Bool = false, reading tables: [(String, [String])],
        _ body: (PostgresConnection, OldVersionViews, [[[String?]]]) throws -> Void
    ) throws {
        try S.withStore(model, rows: rows) { connection in
            let before = try tables.map { try S.rows($0.0, $0.1, on: connection) }
            try S.migrate(model, allowDataLoss: allowDataLoss, on: connection)
            let views = try create(model, on: connection)
            #expect(views.schema == schema)
            try body(connection, views, before)
        }
    }

    /// v1's views over the store, created in one transaction.
    static func create(_ model: VersionedModel, on connection: PostgresConnection) throws -> OldVersionViews {
        let (v1, v2) = (model.versions[0], model.versions[1])
        let mapping = try #require(MappingInference.infer(from: v1, to: v2).mapping)
        let views = try OldVersionViews(mapping: mapping, from: v1, to: v2, store: S.store)
        try connection.transaction {
            for statement in views.statements { try connection.execute(statement) }
        }
        return views
    }

    /// Rows of a view of v1 as text, ordered by its first column (then the second).
    static func old(_ view: String, _ columns: [String], where condition: String? = nil, on connection: PostgresConnection) throws -> [[String?]] {
        var sql: SQL = "SELECT \(idents: columns) FROM \(ident: schema, view)"
        if let condition { sql.append(" WHERE \(unsafeRaw: condition)") }
        sql.append(columns.count > 1 ? " ORDER BY 1, 2" : " ORDER BY 1")
        return try connection.execute(sql).rows
    }

    /// Runs one statement through v1's views (`search_path` set to its schema, as an old
    /// release would) and returns the first column of its first row, if any.
    @discardableResult
    static func write(_ statement: String, on connection: PostgresConnection) throws -> String? {
        try connection.transaction {
            try connection.execute("SET LOCAL search_path = \(ident: schema)")
            return try connection.execute(SQL(unsafeRaw: statement)).rows.first?.first ?? nil
        }
    }

    /// The SQL type of each column of a view, in order.
    static func columnTypes(of view: String, on connection: PostgresConnection) throws -> [String] {
        try connection.execute("""
            SELECT attname || ' ' || format_type(atttypid, atttypmod) FROM pg_attribute \
            WHERE attrelid = \(nameLiteral: schema, view)::regclass AND attnum > 0 ORDER BY attnum
            """).rows.map { $0[0]! }
    }
}
