import PostgresClient
import SQLBuilding

/// A column as `information_schema.columns` describes it.
public struct CatalogColumn: Sendable, Hashable {
    public var name: String
    /// The SQL type name, e.g. `text`, `bigint`, `timestamp with time zone`.
    public var dataType: String
    public var isNullable: Bool
    /// The default expression as PostgreSQL prints it, e.g. `'draft'::text`; nil when none.
    public var defaultExpression: String?

    public init(name: String, dataType: String, isNullable: Bool, defaultExpression: String? = nil) {
        self.name = name
        self.dataType = dataType
        self.isNullable = isNullable
        self.defaultExpression = defaultExpression
    }
}

/// The columns of `schema.table` in ordinal order; empty when the table does not exist.
public func columns(in schema: String, table: String, on connection: PostgresConnection) throws -> [CatalogColumn] {
    let result = try connection.execute("""
        SELECT column_name, data_type, is_nullable, column_default
        FROM information_schema.columns
        WHERE table_schema = \(schema) AND table_name = \(table)
        ORDER BY ordinal_position
        """)
    return result.rows.indices.map { row in
        CatalogColumn(
            name: result[row: row, column: "column_name"] ?? "",
            dataType: result[row: row, column: "data_type"] ?? "",
            isNullable: result[row: row, column: "is_nullable"] == "YES",
            defaultExpression: result[row: row, column: "column_default"]
        )
    }
}

/// Whether `schema.table` exists as a table (partitioned tables included).
public func tableExists(schema: String, table: String, on connection: PostgresConnection) throws -> Bool {
    let result = try connection.execute("""
        SELECT EXISTS (
            SELECT 1 FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = \(schema) AND c.relname = \(table) AND c.relkind IN ('r', 'p')
        ) AS found
        """)
    return result.bool(0, "found") == true
}

public func schemaExists(_ schema: String, on connection: PostgresConnection) throws -> Bool {
    let result = try connection.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = \(schema)) AS found"
    )
    return result.bool(0, "found") == true
}

/// The number of rows in `schema.table`.
public func rowCount(schema: String, table: String, on connection: PostgresConnection) throws -> Int {
    let result = try connection.execute("SELECT count(*) AS n FROM \(ident: schema, table)")
    return Int(result.int(0, "n") ?? 0)
}
