import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 24: `plan` shows the publications around the store and what each step does to them;
/// a `FOR ALL TABLES` publisher does not refuse the updates and deletes of orchestrator's own
/// tables.
@Suite("Replication in plan and on a FOR ALL TABLES publisher")
struct ReplicationPlanTests {
    /// Kitchen 1 with rows, as the heavyweight tests use it.
    static func withKitchen(_ body: (_ folder: URL, _ url: String, _ connection: PostgresConnection) throws -> Void) throws {
        try withAppliedStore { folder, url, connection in
            try connection.execute("INSERT INTO kitchen.chef (name) SELECT 'chef ' || i FROM generate_series(1, 20) AS i")
            try connection.execute("INSERT INTO kitchen.recipe (name, temperature, amount, chef_pk) SELECT 'recipe ' || i, 212, i, 1 + i % 20 FROM generate_series(1, 100) AS i")
            try body(folder, url, connection)
        }
    }

    @Test("plan lists a FOR TABLE publication and the heavyweight step's replication hazards, in text and JSON", integration)
    func planShowsPublication() throws {
        try Self.withKitchen { folder, url, connection in
            try connection.execute("CREATE PUBLICATION kitchen_recipes FOR TABLE kitchen.recipe")
            let text = try OrchestratorBinary.run(["plan", "--model", folder.path], databaseURL: url)
            #expect(text.exitCode == 0, "\(text)")
            #expect(text.stdoutLines.contains("replication: publication kitchen_recipes (FOR TABLE): recipe"), "\(text)")
            let hazards = text.stdoutLines.filter { $0.hasPrefix("-- hazard replication") }
            #expect(hazards.contains {
                $0 == "-- hazard replicationMembershipCarried: publication kitchen_recipes publishes kitchen.recipe, which the step replaces: the new tables take their place in it in the swap's transaction"
            }, "\(text)")
            #expect(hazards.contains { $0.hasPrefix("-- hazard replicationColumnsAddedFirst: ") && $0.contains("kitchen.recipe.temperature_c") }, "\(text)")
            #expect(hazards.contains { $0.hasPrefix("-- hazard replicationColumnsDroppedLast: published columns kitchen.recipe.amount, kitchen.recipe.chef_pk, kitchen.recipe.temperature go") }, "\(text)")
            #expect(!text.stdout.contains("dependentObjects"), "\(text)")

            let json = try jsonObject(try OrchestratorBinary.run(["plan", "--model", folder.path, "--format", "json"], databaseURL: url).stdout)
            let replication = try #require(json["replication"] as? [String: Any])
            let publications = try #require(replication["publications"] as? [[String: Any]])
            #expect(publications.count == 1)
            #expect(publications.first?["form"] as? String == "tableList")
            #expect(publications.first?["tables"] as? [String] == ["recipe"])
            let steps = try #require(json["steps"] as? [[String: Any]])
            let codes = (steps.first?["hazards"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
            #expect(codes.contains("replicationMembershipCarried") && codes.contains("replicationColumnsAddedFirst"), "\(codes)")
        }
    }

    @Test("a FOR ALL TABLES publication: apply --online of a heavyweight step needs --allow-all-tables-publication; with it, updates and deletes orchestrator's own tables without being refused", integration)
    func allTablesPublisher() throws {
        try Self.withKitchen { folder, url, connection in
            try connection.execute("CREATE PUBLICATION everything FOR ALL TABLES")
            let plan = try OrchestratorBinary.run(["plan", "--model", folder.path], databaseURL: url)
            #expect(plan.stdoutLines.contains("replication: publication everything (FOR ALL TABLES): chef, recipe"), "\(plan)")
            #expect(plan.stdoutLines.contains { $0.hasPrefix("-- hazard replicationAllTables: ") }, "\(plan)")
            let schemas = "SELECT string_agg(nspname, ',' ORDER BY nspname) AS s FROM pg_namespace WHERE nspname LIKE 'kitchen%'"
            let before = try connection.execute(SQL(unsafeRaw: schemas)).value(0, "s")
            let refused = try OrchestratorBinary.run(["apply", "--online", "--model", folder.path], databaseURL: url)
            #expect(refused.exitCode == 1, "\(refused)")
            #expect(refused.stderr.contains("(replicationAllTables) step 1 of 1 ('Kitchen 1' -> 'Kitchen 2'): a FOR ALL TABLES publication also publishes"), "\(refused)")
            #expect(refused.stderr.contains("nothing was changed") && refused.stderr.contains("--allow-all-tables-publication"), "\(refused)")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 1")
            #expect(try connection.execute(SQL(unsafeRaw: schemas)).value(0, "s") == before)
            let apply = try OrchestratorBinary.run(["apply", "--online", "--allow-all-tables-publication", "--model", folder.path], databaseURL: url)
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 2")
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe").int(0, "n") == 100)
            // Every table orchestrator made has a primary key, so updates and deletes publish.
            let keyless = try connection.execute("""
                SELECT string_agg(c.oid::regclass::text, ', ') AS names FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.relkind = 'r' AND (n.nspname = 'orchestrator' OR n.nspname LIKE 'kitchen%')
                  AND NOT EXISTS (SELECT 1 FROM pg_index x WHERE x.indrelid = c.oid AND x.indisprimary)
                """).value(0, "names")
            #expect(keyless == nil)
        }
    }

    @Test("restore after a heavyweight step leaves the publications on the store, not on <store>~undone", integration)
    func restoreKeepsPublications() throws {
        try Self.withKitchen { folder, url, connection in
            try connection.execute("CREATE PUBLICATION whole FOR TABLES IN SCHEMA kitchen")
            try connection.execute("CREATE PUBLICATION recipes FOR TABLE kitchen.recipe")
            let published = """
                SELECT (SELECT string_agg(n.nspname, ',') FROM pg_publication_namespace pn JOIN pg_namespace n ON n.oid = pn.pnnspid) AS schemas,
                       (SELECT string_agg(schemaname || '.' || tablename, ',') FROM pg_publication_tables WHERE pubname = 'recipes') AS tables
                """
            let apply = try OrchestratorBinary.run(["apply", "--model", folder.path], databaseURL: url)
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(try connection.execute(SQL(unsafeRaw: published)).rows == [["kitchen", "kitchen.recipe"]])
            let restore = try OrchestratorBinary.run(["restore", "--model", folder.path], databaseURL: url)
            #expect(restore.exitCode == 0, "\(restore)")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores").value(0, "version_name") == "Kitchen 1")
            #expect(try connection.execute(SQL(unsafeRaw: published)).rows == [["kitchen", "kitchen.recipe"]])
        }
    }
}
