import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

extension ViewsDrift {
    /// The drift of the previous version's views schema of an expansion in flight from that
    /// version's layout (`compare`); none when the model's files no longer hold that version.
    public static func drift(of expansion: ExpansionRecord, model: VersionedModel, on connection: PostgresConnection) throws -> [DriftItem] {
        try drifts(of: [expansion.inFlight], model: model, on: connection)[expansion.viewsSchema] ?? []
    }

    /// The same for several expansions in one statement however many they are (`fleet
    /// status`'s survey), by views schema.
    static func drifts(of expansions: [ExpansionInFlight], model: VersionedModel, on connection: PostgresConnection) throws -> [String: [DriftItem]] {
        let known = expansions.compactMap { expansion in model.version(named: expansion.oldVersion).map { (expansion.viewsSchema, $0) } }
        guard !known.isEmpty else { return [:] }
        let result = try connection.execute("""
            SELECT n.nspname AS schema_name, c.relname AS view, a.attname AS column_name
            FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE n.nspname = ANY(\(CatalogReader.arrayLiteral(known.map(\.0)))::name[]) AND c.relkind = 'v'
            ORDER BY n.nspname, c.relname, a.attnum
            """)
        var found: [String: [String: [String]]] = [:]
        for row in result.rows.indices {
            guard let schema = result.value(row, "schema_name"), let view = result.value(row, "view"),
                  let column = result.value(row, "column_name") else { continue }
            found[schema, default: [:]][view, default: []].append(column)
        }
        var drifts: [String: [DriftItem]] = [:]
        for (schema, old) in known {
            drifts[schema] = compare(oldVersion: old, viewsSchema: schema, found: found[schema] ?? [:])
        }
        return drifts
    }
}
