import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// 1,530 stores on three servers (one made store by store, two copies of it): `fleet status`
/// reads them all, and `fleet apply` by two workers migrates the few that need it and records
/// every one, each exactly once.
@Suite("fleet at scale")
struct FleetScaleTests {
    static let upToDatePerServer = 500
    static let oldPerServer = 10

    /// `count` copies of the store `template` (made by orchestrator, filled) named
    /// `prefix00001`…: its create statements from the history run again for each name, its
    /// rows copied, its metadata row copied; in batches, each its own transaction.
    static func clone(_ template: String, as prefix: String, count: Int, on connection: PostgresConnection) throws {
        for start in stride(from: 1, through: count, by: 50) {
            try connection.execute(SQL(unsafeRaw: """
                DO $$
                DECLARE
                    ddl text[] := (SELECT array_agg(x ORDER BY n) FROM orchestrator.migrations m, jsonb_array_elements_text(m.statements) WITH ORDINALITY AS t(x, n)
                                   WHERE m.store = '\(template)' AND m.kind = 'create');
                    meta jsonb := (SELECT to_jsonb(s) FROM orchestrator.stores s WHERE store = '\(template)');
                    name text;
                    statement text;
                    tab text;
                BEGIN
                    FOR i IN \(start)..\(min(start + 49, count)) LOOP
                        name := '\(prefix)' || lpad(i::text, 5, '0');
                        FOREACH statement IN ARRAY ddl LOOP
                            EXECUTE replace(statement, '"\(template)"', format('%I', name));
                        END LOOP;
                        FOREACH tab IN ARRAY ARRAY['chef', 'recipe', 'ingredient'] LOOP
                            EXECUTE format('INSERT INTO %I.%I SELECT * FROM %I.%I', name, tab, '\(template)', tab);
                        END LOOP;
                        INSERT INTO orchestrator.stores SELECT (jsonb_populate_record(NULL::orchestrator.stores, meta || jsonb_build_object('store', name))).*;
                    END LOOP;
                END $$
                """))
        }
    }

    /// Three servers with the same stores: the first made store by store, the other two
    /// copies of it (`CREATE DATABASE … TEMPLATE`), dropped afterwards.
    static func withCopies(of url: String, _ body: ([String]) throws -> Void) throws {
        let admin = try PostgresConnection(url: try #require(TestDatabase.adminURL))
        defer { admin.close() }
        let connection = try PostgresConnection(url: url)
        let name = try #require(try connection.execute("SELECT current_database() AS name").value(0, "name"))
        connection.close()
        let copies = ["\(name)_b", "\(name)_c"]
        defer { for copy in copies { _ = try? admin.execute("DROP DATABASE IF EXISTS \(ident: copy) WITH (FORCE)") } }
        for copy in copies { try admin.execute("CREATE DATABASE \(ident: copy) TEMPLATE \(ident: name)") }
        try body([url] + copies.map { TestDatabase.connectionString(TestDatabase.adminURL!, database: $0) })
    }

    @Test("status and apply over 1,530 stores on three servers, by two workers: every store recorded once, the old ones migrated with their rows", integration)
    func thousandsOfStores() throws {
        let reference = try FleetFixture.referenceContents(from: "Recipes 1")
        try TestDatabase.withFreshDatabase { first in
            try FleetFixture.makeStores(["tmpl_new"], at: "Recipes 3", url: first)
            try FleetFixture.makeStores(["tmpl_old"], at: "Recipes 1", url: first)
            let connection = try PostgresConnection(url: first)
            try Self.clone("tmpl_new", as: "new_", count: Self.upToDatePerServer, on: connection)
            try Self.clone("tmpl_old", as: "old_", count: Self.oldPerServer, on: connection)
            connection.close()
            try Self.withCopies(of: first) { urls in
                let fleet = try FleetFixture.writeFleet(servers: urls.enumerated().map { ("s\($0.offset)", $0.element, ["new_*", "old_*"]) })
                let total = 3 * (Self.upToDatePerServer + Self.oldPerServer)

                let status = try FleetFixture.run(["fleet", "status", "--fleet", fleet, "--check", "--format", "json"])
                #expect(status.exitCode == 2, "\(status.stderr)")
                let summary = try #require(try jsonObject(status.stdout)["summary"] as? [String: Any])
                #expect(summary["stores"] as? Int == total)
                let byStatus = try #require(summary["byStatus"] as? [String: Any])
                #expect(byStatus["upToDate"] as? Int == 3 * Self.upToDatePerServer, "\(byStatus)")
                #expect(byStatus["migrationRequired"] as? Int == 3 * Self.oldPerServer, "\(byStatus)")

                let workers = try (1...2).map { _ in
                    try RunningOrchestrator(["fleet", "apply", "--fleet", fleet, "--run", "scale", "--jobs", "3", "--quiet"], databaseURL: nil)
                }
                for result in try workers.map({ try $0.finish(killingAfter: 300) }) { #expect(result.exitCode == 0, "\(result.stderr)") }
                let journal = try PostgresConnection(url: urls[0])
                defer { journal.close() }
                let outcomes = try journal.execute("""
                    SELECT outcome, count(*) AS n, max(attempts) AS most FROM orchestrator_fleet.stores WHERE run = 'scale' GROUP BY outcome ORDER BY outcome
                    """).rows
                #expect(outcomes == [["migrated", String(3 * Self.oldPerServer), "1"], ["upToDate", String(3 * Self.upToDatePerServer), "0"]], "\(outcomes)")
                for url in urls {
                    let connection = try PostgresConnection(url: url)
                    defer { connection.close() }
                    let versions = try connection.execute("""
                        SELECT version_name, count(*) AS n FROM orchestrator.stores WHERE store ~ '^(new|old)_' GROUP BY version_name
                        """).rows
                    #expect(versions == [["Recipes 3", String(Self.upToDatePerServer + Self.oldPerServer)]], "\(versions)")
                    for number in 1...Self.oldPerServer {
                        let store = String(format: "old_%05d", number)
                        let contents = try FleetFixture.contents(of: store, on: connection).map { $0.replacingOccurrences(of: store, with: "reference") }
                        #expect(contents == reference, "\(store)")
                    }
                    let history = try connection.execute("""
                        SELECT count(*) AS n FROM orchestrator.migrations WHERE kind <> 'create' AND outcome = 'succeeded' AND store ~ '^(new|old)_'
                        """)
                    #expect(history.int(0, "n") == Int64(Self.oldPerServer), "each old store migrated once, no other store touched")
                }
            }
        }
    }
}
