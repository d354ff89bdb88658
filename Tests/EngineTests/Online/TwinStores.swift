import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Two stores of one database holding the same rows: one migrated with `apply --online`, the
/// other offline. After both ran, they must be the same store (`TwinComparison.differences`).
enum TwinStores {
    /// Creates `twin` at `version` and copies every row of `live` (a store at that version)
    /// into it, keys included, with the identity sequences where `live`'s stand; then checks
    /// that the two are the same store, so a difference after the migrations is the migrations'.
    static func copy(_ model: VersionedModel, version: String, from live: String, to twin: String, on connection: PostgresConnection) throws {
        _ = try StoreMigrator(connection: connection, model: model, store: twin, targetVersion: version).apply()
        let tables = try TwinComparison.tables(of: live, on: connection)
        try connection.transaction {
            // Rows in any order: the foreign keys' triggers do not fire.
            try connection.execute("SET LOCAL session_replication_role = replica")
            for table in tables {
                try connection.execute("INSERT INTO \(ident: twin, table) OVERRIDING SYSTEM VALUE SELECT * FROM \(ident: live, table)")
            }
        }
        let identities = try connection.execute("""
            SELECT table_name, column_name FROM information_schema.columns
            WHERE table_schema = \(live) AND is_identity = 'YES' ORDER BY 1, 2
            """)
        for row in identities.rows {
            guard let table = row[0], let column = row[1] else { continue }
            try connection.execute("""
                SELECT setval(pg_get_serial_sequence(\(nameLiteral: twin, table), \(literal: column)), max(\(ident: column)))
                FROM \(ident: live, table) HAVING max(\(ident: column)) IS NOT NULL
                """)
        }
        let differences = try TwinComparison.differences(live, twin, on: connection)
        #expect(differences.isEmpty, "the twin stores differ before any migration: \(differences.prefix(3))")
    }

    /// The number of rows of every table of `schema`.
    static func rowCount(of schema: String, on connection: PostgresConnection) throws -> Int {
        try TwinComparison.tables(of: schema, on: connection).reduce(0) { try $0 + TestSupport.rowCount(schema: schema, table: $1, on: connection) }
    }

    /// What a run left, named without the store's name: triggers on the store's tables,
    /// functions in the store's schema or its staging schema, the store's online checkpoint,
    /// shadow tables and the staging schema. Empty once a run finished.
    static func leftovers(of store: String, on connection: PostgresConnection) throws -> [String] {
        var found: [String] = []
        found += try connection.execute("""
            SELECT 'trigger ' || c.relname || '.' || t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
            WHERE c.relnamespace = to_regnamespace(\(quoteIdentifier(store))) AND NOT t.tgisinternal ORDER BY 1
            """).rows.compactMap { $0[0] }
        found += try connection.execute("""
            SELECT 'function ' || proname FROM pg_proc
            WHERE pronamespace IN (to_regnamespace(\(quoteIdentifier(store))), to_regnamespace(\(quoteIdentifier(store + "~staging"))))
            ORDER BY 1
            """).rows.compactMap { $0[0] }
        if try connection.execute("SELECT to_regclass('orchestrator.online_progress') IS NOT NULL AS found").bool(0, "found") == true {
            found += try connection.execute("SELECT 'checkpoint ' || count(*) FROM orchestrator.online_progress WHERE store = \(store) HAVING count(*) > 0")
                .rows.compactMap { $0[0] }
        }
        found += try TwinComparison.tables(of: store, on: connection).filter { $0.hasPrefix("orchestrator_online_") }.map { "table \($0)" }
        found += try connection.execute("SELECT 'staging schema' FROM pg_namespace WHERE nspname = \(store + "~staging")").rows.compactMap { $0[0] }
        return found
    }

    /// The version the metadata names for `store`.
    static func version(of store: String, on connection: PostgresConnection) throws -> String? {
        try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = \(store)").value(0, "version_name")
    }

    /// Every row of every table of `store`, as text: what a step that stopped must not change.
    static func contents(of store: String, on connection: PostgresConnection) throws -> [String] {
        try TwinComparison.tables(of: store, on: connection).map { table in
            try connection.execute("SELECT coalesce(string_agg(t::text, '|' ORDER BY t::text), '') AS v FROM \(ident: store, table) AS t").value(0, "v") ?? ""
        }
    }
}
