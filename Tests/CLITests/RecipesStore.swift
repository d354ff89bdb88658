import Foundation
import PostgresClient
import SQLBuilding
import TestSupport

/// The `migrations` model (Recipes 1-3) as the drift, check, restore, adopt and history tests
/// use it: its hashes, a store made by the built binary and filled with rows, and what must not
/// change when a command refuses.
enum RecipesStore {
    static let hashes: [String: String] = [
        "Recipes 1": "5cd480b78ce8bfcbe7f671eede88114a99237fdec328e35c7df39334d5f934c1",
        "Recipes 2": "f4765e15b1021f7158fe086409ddbc2b402af2bf722de0fb5362accd6691687e",
        "Recipes 3": "1946af5ee5c6b5a17f8138f4747e3caf34f80c9357f0540fea1a94713d52bc67",
    ]

    /// `status`'s first three lines for the store at `version`.
    static func statusLines(at version: String) -> [String] {
        [
            "store recipes: at '\(version)', model hash \(hashes[version]!)",
            "current version: 'Recipes 3', model hash \(hashes["Recipes 3"]!)",
            version == "Recipes 3" ? "compatible: yes" : "compatible: no, migration required (see `orchestrator plan`)",
        ]
    }

    /// Runs `orchestrator arguments… --model migrations`.
    static func run(_ arguments: [String], url: String) throws -> CLIResult {
        try OrchestratorBinary.run(arguments + ["--model", "migrations"], databaseURL: url)
    }

    /// Creates the store at `version` with the binary and fills it: two chefs, three recipes,
    /// four ingredients.
    static func create(at version: String, url: String, on connection: PostgresConnection) throws {
        let apply = try run(["apply", "--to", version], url: url)
        guard apply.exitCode == 0 else { throw SetupFailed(result: apply) }
        try connection.execute("""
            INSERT INTO recipes.chef (_entity, name) VALUES ('Chef', 'Ada'), ('Chef', 'Bo');
            INSERT INTO recipes.recipe (_entity, name, rating, chef_pk) SELECT 'Recipe', 'Recipe ' || n, n, (SELECT min(_pk) FROM recipes.chef) FROM generate_series(1, 3) AS n;
            INSERT INTO recipes.ingredient (_entity, name, recipe_pk) SELECT 'Ingredient', 'Ingredient ' || n, (SELECT min(_pk) FROM recipes.recipe) FROM generate_series(1, 4) AS n;
            """)
    }

    /// Every table's rows, the catalog of the store's schemas and the metadata: what a refused
    /// command must leave as it was.
    static func fingerprint(on connection: PostgresConnection) throws -> [String] {
        var parts: [String] = []
        let tables = try connection.execute("SELECT schemaname, tablename FROM pg_tables WHERE schemaname LIKE 'recipes%' ORDER BY 1, 2")
        for row in tables.rows.indices {
            let (schema, table) = (tables.value(row, "schemaname")!, tables.value(row, "tablename")!)
            let rows = try connection.execute("SELECT coalesce(string_agg(t::text, '|' ORDER BY t::text), '') AS v FROM \(ident: schema, table) AS t")
            parts.append("\(schema).\(table): " + (rows.value(0, "v") ?? ""))
        }
        parts.append(try connection.execute("""
            SELECT string_agg(format('%s.%s.%s %s %s %s', table_schema, table_name, column_name, data_type, is_nullable, column_default), '|' ORDER BY 1) AS v
            FROM (SELECT * FROM information_schema.columns WHERE table_schema LIKE 'recipes%' ORDER BY table_schema, table_name, column_name) AS c
            """).value(0, "v") ?? "")
        parts.append(try connection.execute("""
            SELECT string_agg(conname || ' ' || pg_get_constraintdef(k.oid), '|' ORDER BY conname) AS v
            FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace WHERE n.nspname LIKE 'recipes%'
            """).value(0, "v") ?? "")
        parts.append(try connection.execute("SELECT string_agg(indexname, '|' ORDER BY indexname) AS v FROM pg_indexes WHERE schemaname LIKE 'recipes%'").value(0, "v") ?? "")
        parts.append(try connection.execute("SELECT string_agg(nspname, '|' ORDER BY nspname) AS v FROM pg_namespace WHERE nspname LIKE 'recipes%'").value(0, "v") ?? "")
        parts.append(try connection.execute("SELECT store || ' ' || version_name || ' ' || model_hash AS v FROM orchestrator.stores").value(0, "v") ?? "")
        parts.append(try connection.execute("SELECT count(*)::text AS v FROM orchestrator.migrations").value(0, "v") ?? "")
        return parts
    }

    /// `status --format json`'s drift, one `kind|object|table|column|name|expected|found` line per entry.
    static func driftEntries(_ json: String) throws -> [String] {
        let entries = try jsonObject(json)["drift"] as? [[String: Any]] ?? []
        return entries.map { entry in
            ["kind", "object", "table", "column", "name", "expected", "found"].map { (entry[$0] as? String) ?? "null" }.joined(separator: "|")
        }
    }
}

struct SetupFailed: Error, CustomStringConvertible {
    var result: CLIResult
    var description: String { "setup failed: \(result)" }
}
