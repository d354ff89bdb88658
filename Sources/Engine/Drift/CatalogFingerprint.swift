import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// A digest of the catalog rows a drift check reads for a schema: the identity and row version
/// (`xmin`) of each row of pg_class, pg_attribute, pg_attrdef, pg_constraint (with the table a
/// foreign key references) and pg_index (with the index's pg_class row) of the schema's tables
/// and sequences. Any DDL on those rows writes new row versions, so the digest changes; what does
/// not change the schema (ANALYZE, VACUUM, rows written, a transaction rolled back) leaves it as
/// it was. Nothing is deparsed and no table is locked, and every row is found by an index: the
/// schema's relations through pg_depend (pg_class has no index on its schema), then each
/// catalog by its relation. One cheap statement for one schema or thousands.
enum CatalogFingerprint {
    /// The fingerprints of `schemas` that exist and hold a relation, in one statement.
    static func read(schemas: [String], on connection: PostgresConnection) throws -> [String: String] {
        try read(schemas: schemas, besides: nil, on: connection).mapValues(\.fingerprint)
    }

    /// The fingerprints of `schemas`, each with the value of `extra` (a scalar expression read
    /// in the same statement, `ReplicationFingerprint`'s under a store's lock).
    static func read(schemas: [String], besides extra: SQL?, on connection: PostgresConnection) throws -> [String: (fingerprint: String, extra: String?)] {
        fingerprints(in: try connection.execute(statement(schemas: schemas, besides: extra)))
    }

    static func statement(schemas: [String], besides extra: SQL?) -> SQL {
        let extraColumn: SQL = extra.map { ", \($0) AS extra" } ?? ", NULL AS extra"
        return """
            WITH r AS MATERIALIZED (
                SELECT n.nspname AS schema_name, d.objid AS rel FROM pg_namespace n
                JOIN pg_depend d ON d.refclassid = 'pg_namespace'::regclass AND d.refobjid = n.oid AND d.classid = 'pg_class'::regclass
                WHERE n.nspname IN (SELECT unnest(\(CatalogReader.arrayLiteral(schemas))::name[]))
            )
            SELECT schema_name, md5(string_agg(item, ',' ORDER BY item)) AS fingerprint\(extraColumn) FROM (
                SELECT r.schema_name, 'c' || c.oid || ':' || c.xmin AS item FROM r JOIN pg_class c ON c.oid = r.rel
                UNION ALL SELECT r.schema_name, 'a' || a.attrelid || '.' || a.attnum || ':' || a.xmin FROM r JOIN pg_attribute a ON a.attrelid = r.rel
                UNION ALL SELECT r.schema_name, 'd' || d.oid || ':' || d.xmin FROM r JOIN pg_attrdef d ON d.adrelid = r.rel
                UNION ALL SELECT r.schema_name, 'k' || k.oid || ':' || k.xmin || ':' || coalesce(t.xmin::text, '')
                    FROM r JOIN pg_constraint k ON k.conrelid = r.rel LEFT JOIN pg_class t ON t.oid = k.confrelid
                UNION ALL SELECT r.schema_name, 'i' || x.indexrelid || ':' || x.xmin || ':' || i.xmin
                    FROM r JOIN pg_index x ON x.indrelid = r.rel JOIN pg_class i ON i.oid = x.indexrelid
            ) AS f
            GROUP BY schema_name
            """
    }

    static func fingerprints(in result: QueryResult) -> [String: (fingerprint: String, extra: String?)] {
        var fingerprints: [String: (fingerprint: String, extra: String?)] = [:]
        for row in result.rows.indices {
            guard let schema = result.value(row, "schema_name"), let fingerprint = result.value(row, "fingerprint") else { continue }
            fingerprints[schema] = (fingerprint, result.value(row, "extra"))
        }
        return fingerprints
    }
}
