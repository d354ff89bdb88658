import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// What the pipeline tests (saved plans, SQL scripts, dry runs) share: running psql and
/// pg_dump, and fixtures with rows in them.
enum Pipeline {
    /// Runs an installed PostgreSQL client (`psql`, `pg_dump`) to its end.
    static func client(_ name: String, _ arguments: [String]) throws -> CLIResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [name] + arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read before waiting: a dump larger than the pipe's buffer would block the process.
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIResult(exitCode: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// The whole database as pg_dump writes it: catalog and rows. Sequence positions are left
    /// out: PostgreSQL never rolls back `nextval`, so a rolled-back insert still moves them.
    static func dump(_ url: String) throws -> String {
        try pgDump(url, ["--no-owner"]).filter { !$0.hasPrefix("SELECT pg_catalog.setval(") }.joined(separator: "\n")
    }

    /// The catalog only (every schema), as pg_dump writes it.
    static func catalog(_ url: String) throws -> String {
        try pgDump(url, ["--no-owner", "--schema-only"]).joined(separator: "\n")
    }

    /// pg_dump's lines, without the `\restrict` and `\unrestrict` lines, whose key is new each time.
    private static func pgDump(_ url: String, _ options: [String]) throws -> [String] {
        let result = try client("pg_dump", options + ["--dbname", url])
        try #require(result.exitCode == 0, "\(result)")
        return result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            .filter { !$0.hasPrefix("\\restrict ") && !$0.hasPrefix("\\unrestrict ") }
    }

    /// Every row of every table of `schemas`, one JSON object a line, ordered; the columns in
    /// `ignoring` (per table name) are left out.
    static func rows(_ url: String, schemas: [String], ignoring: [String: [String]] = [:]) throws -> [String] {
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        let tables = try connection.execute("""
            SELECT table_schema, table_name FROM information_schema.tables
            WHERE table_schema = ANY(string_to_array(\(schemas.joined(separator: ",")), ',')) AND table_type = 'BASE TABLE'
            ORDER BY 1, 2
            """)
        var lines: [String] = []
        for row in tables.rows.indices {
            let schema = tables.value(row, "table_schema") ?? "", table = tables.value(row, "table_name") ?? ""
            let dropped = (ignoring[table] ?? []).map { " - \(quoteLiteral($0))" }.joined()
            let result = try connection.execute(SQL(unsafeRaw: "SELECT (to_jsonb(t)\(dropped))::text AS row FROM \(quoteIdentifier(schema)).\(quoteIdentifier(table)) AS t ORDER BY 1"))
            lines += result.rows.map { "\(schema).\(table) \($0[0] ?? "")" }
        }
        return lines
    }

    /// A one-line value from the database.
    static func value(_ url: String, _ query: String) throws -> String? {
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        return try connection.execute(SQL(unsafeRaw: query)).rows.first?[0] ?? nil
    }

    /// A fresh database with the Recipes store at 'Recipes 1' and the plan to 'Recipes 3' saved
    /// by `plan --out`: `body` gets the database and the file.
    static func withSavedRecipesPlan(_ body: (_ url: String, _ file: String) throws -> Void) throws {
        try withTemporaryFolder { folder in
            try TestDatabase.withFreshDatabase { url in
                try recipesAtVersionOne(url)
                let file = folder.appendingPathComponent("plan.json").path
                let plan = try OrchestratorBinary.run(["plan", "--model", "migrations", "--out", file, "--format", "json"], databaseURL: url)
                try #require(plan.exitCode == 0, "\(plan)")
                try body(url, file)
            }
        }
    }

    /// The bench's store (bench/model) `recipes` at 'Bench 1' with a chef, two cuisines and nine
    /// recipes, half of them without a rating.
    static func benchAtVersionOne(_ url: String) throws {
        let create = try OrchestratorBinary.run(["apply", "--model", "bench/model", "--to", "Bench 1", "--store", "recipes"], databaseURL: url)
        try #require(create.exitCode == 0, "\(create)")
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        try connection.execute("""
            INSERT INTO recipes.chef (name) VALUES ('Ada');
            INSERT INTO recipes.cuisine (name) VALUES ('Thai'), ('Nordic');
            INSERT INTO recipes.recipe (name, rating, chef_pk, cuisine_pk)
            SELECT 'r' || g, CASE WHEN g % 2 = 0 THEN NULL ELSE 4 END, 1, 1 + g % 2 FROM generate_series(1, 9) g
            """)
    }

    /// The Recipes store (migrations/) at 'Recipes 1' with a chef, two recipes and ingredients.
    static func recipesAtVersionOne(_ url: String) throws {
        let create = try OrchestratorBinary.run(["apply", "--model", "migrations", "--to", "Recipes 1"], databaseURL: url)
        try #require(create.exitCode == 0, "\(create)")
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        try connection.execute("""
            INSERT INTO recipes.chef (_entity, name) VALUES ('Chef', 'Julia');
            INSERT INTO recipes.recipe (_entity, name, instructions, chef_pk)
            SELECT 'Recipe', r, 'stir', c._pk FROM recipes.chef c, (VALUES ('Ratatouille'), ('Soup')) AS v(r);
            INSERT INTO recipes.ingredient (_entity, name, amount, recipe_pk)
            SELECT 'Ingredient', i, '1', r._pk FROM recipes.recipe r, (VALUES ('Tomato'), ('Salt')) AS v(i);
            ANALYZE;
            """)
    }

    /// The Kitchen model (Kitchen 1 -> 2 by a set-based mapping model, every row kept) at
    /// 'Kitchen 1' with rows.
    static let kitchenMapping = ValidateMappingTests.mapping.replacingOccurrences(of: "    filter: \"amount > 100\"\n", with: "")

    static func kitchenAtVersionOne(_ url: String, model folder: URL) throws {
        try ValidateMappingTests.writeModel(in: folder, mapping: kitchenMapping)
        let create = try OrchestratorBinary.run(["apply", "--model", folder.path, "--to", "Kitchen 1"], databaseURL: url)
        try #require(create.exitCode == 0, "\(create)")
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        try connection.execute("INSERT INTO kitchen.recipe (_entity, temperature, amount) SELECT 'Recipe', 200 + g, g FROM generate_series(1, 250) g; ANALYZE;")
    }
}
