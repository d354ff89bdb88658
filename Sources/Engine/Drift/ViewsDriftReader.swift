import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

extension ViewsDrift {
    /// The drift of the views schema of an expansion in flight from the layout of the version
    /// it serves (`compare`): the previous one, or a heavyweight step's new one (its views read
    /// the staging tables); none when the model's files no longer hold that version.
    public static func drift(of expansion: ExpansionRecord, model: VersionedModel, on connection: PostgresConnection) throws -> [DriftItem] {
        var served = expansion.inFlight
        if served.servesNewVersion(of: expansion.store) { served.oldVersion = expansion.newVersion }
        return try drifts(of: [served], model: model, on: connection)[expansion.viewsSchema] ?? []
    }

    /// The same for several expansions in one statement however many they are, each judged
    /// against its `oldVersion`'s layout (`fleet
    /// status`'s survey), by views schema. The statement reads the expansions again beside the
    /// views, in one snapshot: an expansion that ended since the caller read it (a `complete`
    /// or `rollback` dropped its views and its record) is left out, never judged drifted.
    static func drifts(of expansions: [ExpansionInFlight], model: VersionedModel, on connection: PostgresConnection) throws -> [String: [DriftItem]] {
        let known = expansions.compactMap { expansion in model.version(named: expansion.oldVersion).map { (expansion.viewsSchema, $0) } }
        guard !known.isEmpty else { return [:] }
        let result = try connection.execute("""
            SELECT e.views_schema AS schema_name, c.relname AS view, a.attname AS column_name
            FROM \(ident: MetadataSchema.schema, ExpansionRecord.name) AS e
            LEFT JOIN pg_catalog.pg_namespace n ON n.nspname = e.views_schema
            LEFT JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relkind = 'v'
            LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE e.views_schema = ANY(\(CatalogReader.arrayLiteral(known.map(\.0)))::text[])
            ORDER BY e.views_schema, c.relname, a.attnum
            """)
        var live: Set<String> = []
        var found: [String: [String: [String]]] = [:]
        for row in result.rows.indices {
            guard let schema = result.value(row, "schema_name") else { continue }
            live.insert(schema)
            guard let view = result.value(row, "view"), let column = result.value(row, "column_name") else { continue }
            found[schema, default: [:]][view, default: []].append(column)
        }
        var drifts: [String: [DriftItem]] = [:]
        for (schema, old) in known where live.contains(schema) {
            drifts[schema] = compare(oldVersion: old, viewsSchema: schema, found: found[schema] ?? [:])
        }
        return drifts
    }
}
