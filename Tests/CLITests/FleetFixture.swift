import Engine
import Foundation
import ObjectModel
import PostgresClient
import SQLBuilding
import TestSupport

/// A fleet for the fleet commands' tests. Each "server" is a fresh database on the test
/// server: it has its own orchestrator metadata and its own connection string, as a separate
/// server has (what differs between real servers, the network, is what `unreachableURL` stands
/// for). Stores are Recipes stores (migrations/), made in-process and filled with rows.
enum FleetFixture {
    /// Nothing listens on port 1 of the loopback address: connecting fails at once. Its
    /// password must never be printed.
    static let unreachableURL = "postgres://fleet:hunter2secret@127.0.0.1:1/app?connect_timeout=3"

    static func withServers<T>(_ count: Int, _ urls: [String] = [], _ body: ([String]) throws -> T) throws -> T {
        guard urls.count < count else { return try body(urls) }
        return try TestDatabase.withFreshDatabase { url in try withServers(count, urls + [url], body) }
    }

    static let model: VersionedModel = {
        try! ModelLoader.loadEachVersion(path: OrchestratorBinary.repository.appendingPathComponent("migrations").path)
    }()

    /// Stores at `version`, each with two chefs, three recipes (one without a rating) and four
    /// ingredients.
    static func makeStores(_ stores: [String], at version: String, url: String) throws {
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        for store in stores {
            _ = try StoreMigrator(connection: connection, model: model, store: store, targetVersion: version).apply()
            try fill(store, instructions: version == "Recipes 3" ? "directions" : "instructions", on: connection)
        }
    }

    /// `instructions`: the column's name at the store's version (Recipes 3 renames it, and makes
    /// rating non-optional).
    static func fill(_ store: String, instructions: String, on connection: PostgresConnection) throws {
        try connection.execute("""
            INSERT INTO \(ident: store, "chef") (_entity, name) VALUES ('Chef', 'Ada'), ('Chef', 'Bo')
            """)
        try connection.execute("""
            INSERT INTO \(ident: store, "recipe") (_entity, name, \(ident: instructions), rating, chef_pk)
            SELECT 'Recipe', 'Recipe ' || n, 'Stir ' || n, CASE WHEN n = 2 AND \(instructions == "instructions") THEN NULL ELSE n END, (SELECT min(_pk) FROM \(ident: store, "chef"))
            FROM generate_series(1, 3) AS n
            """)
        try connection.execute("""
            INSERT INTO \(ident: store, "ingredient") (_entity, name, recipe_pk)
            SELECT 'Ingredient', 'Ingredient ' || n, (SELECT min(_pk) FROM \(ident: store, "recipe")) FROM generate_series(1, 4) AS n
            """)
    }

    /// The store's columns and every row of each of its tables.
    static func contents(of store: String, on connection: PostgresConnection) throws -> [String] {
        var parts: [String] = []
        let tables = try connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = \(store) ORDER BY 1")
        for row in tables.rows.indices {
            let table = tables.value(row, "tablename")!
            let columns = try connection.execute("""
                SELECT string_agg(column_name || ' ' || data_type || ' ' || is_nullable, ', ' ORDER BY ordinal_position) AS v
                FROM information_schema.columns WHERE table_schema = \(store) AND table_name = \(table)
                """).value(0, "v") ?? ""
            let rows = try connection.execute("SELECT coalesce(string_agg(t::text, '|' ORDER BY t::text), '') AS v FROM \(ident: store, table) AS t").value(0, "v") ?? ""
            parts.append("\(table) (\(columns)): \(rows)")
        }
        return parts
    }

    /// A fleet file in a fresh folder; `servers` as (name, url, store patterns).
    static func writeFleet(servers: [(String, String, [String]?)], extra: String = "") throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var text = "model: \(OrchestratorBinary.repository.appendingPathComponent("migrations").path)\nservers:\n"
        for (name, url, stores) in servers {
            text += "  - name: \(name)\n    url: \"\(url)\"\n"
            if let stores { text += "    stores: [\(stores.map { "\"\($0)\"" }.joined(separator: ", "))]\n" }
        }
        text += extra
        let path = folder.appendingPathComponent("fleet.yaml").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func run(_ arguments: [String]) throws -> CLIResult {
        try OrchestratorBinary.run(arguments, databaseURL: nil)
    }

    /// An in-process `fleet apply` (named `run`) of tenant_a and tenant_b, made at Recipes 1 on
    /// one server, to Recipes 3, one store at a time: a test changes a store in its `onStart`,
    /// after the survey and before any claim.
    static func lateChangeRun(_ run: String, url: String) throws -> FleetRun {
        try makeStores(["tenant_a", "tenant_b"], at: "Recipes 1", url: url)
        let path = try writeFleet(servers: [("s0", url, nil)])
        guard let target = model.version(named: "Recipes 3") else { preconditionFailure("migrations/ has no Recipes 3") }
        return FleetRun(
            fleet: try FleetFile.load(path: path), model: model, target: target, explicitMappings: [],
            options: ApplyOptions(), run: run, jobs: 1, connect: { try PostgresConnection(url: $0) }
        )
    }

    /// The single-store result: the store made and filled at `version` in a fresh database,
    /// then migrated by `orchestrator apply`.
    static func referenceContents(from version: String) throws -> [String] {
        try TestDatabase.withFreshDatabase { url in
            try makeStores(["reference"], at: version, url: url)
            let apply = try OrchestratorBinary.run(["apply", "--model", "migrations", "--store", "reference"], databaseURL: url)
            guard apply.exitCode == 0 else { throw SetupFailed(result: apply) }
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            return try contents(of: "reference", on: connection)
        }
    }
}
