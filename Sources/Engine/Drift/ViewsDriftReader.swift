import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

extension ViewsDrift {
    /// The drift of the previous version's views schema of an expansion in flight from that
    /// version's layout (`compare`); none when the model's files no longer hold that version.
    public static func drift(of expansion: ExpansionRecord, model: VersionedModel, on connection: PostgresConnection) throws -> [DriftItem] {
        guard let old = model.version(named: expansion.oldVersion) else { return [] }
        let result = try connection.execute("""
            SELECT c.relname AS view, a.attname AS column_name
            FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE n.nspname = \(expansion.viewsSchema) AND c.relkind = 'v'
            ORDER BY c.relname, a.attnum
            """)
        var found: [String: [String]] = [:]
        for row in result.rows.indices {
            guard let view = result.value(row, "view"), let column = result.value(row, "column_name") else { continue }
            found[view, default: []].append(column)
        }
        return compare(oldVersion: old, viewsSchema: expansion.viewsSchema, found: found)
    }
}
