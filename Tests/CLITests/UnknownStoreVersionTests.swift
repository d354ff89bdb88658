import Foundation
import PostgresClient
import Testing
import TestSupport

@Suite("A store made by an unknown version")
struct UnknownStoreVersionTests {
    @Test("plan and apply stop with the store's hash and leave the store and its rows as they were", integration)
    func unknownVersionStopsPlanAndApply() throws {
        try TestDatabase.withFreshDatabase { url in
            let create = try OrchestratorBinary.run(["apply", "--model", "migrations", "--to", "Recipes 1"], databaseURL: url)
            #expect(create.exitCode == 0, "\(create)")

            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try connection.execute("INSERT INTO recipes.recipe (_entity, name) VALUES ('Recipe', 'Pancakes')")
            let unknownHash = String(repeating: "ab", count: 32)
            try connection.execute("UPDATE orchestrator.stores SET model_hash = repeat('ab', 32) WHERE store = 'recipes'")

            for command in ["plan", "apply"] {
                let result = try OrchestratorBinary.run([command, "--model", "migrations"], databaseURL: url)
                #expect(result.exitCode == 1, "\(command): \(result)")
                #expect(result.stderrLines.count == 1, "\(command): \(result)")
                #expect(result.stderrLines.first?.hasPrefix("error: ") == true, "\(command): \(result)")
                #expect(result.stderr.contains(unknownHash), "\(command): \(result)")
                #expect(!result.stdout.contains("now at") && !result.stdout.contains("up to date"), "\(command): \(result)")
            }

            #expect(try tableExists(schema: "recipes", table: "recipe", on: connection))
            #expect(try rowCount(schema: "recipes", table: "recipe", on: connection) == 1)
            let history = try connection.execute("SELECT kind, outcome FROM orchestrator.migrations ORDER BY id")
            #expect(history.rows == [["create", "succeeded"]], "only the first apply is in the history")
            let store = try connection.execute("SELECT version_name, model_hash FROM orchestrator.stores")
            #expect(store.rows == [["Recipes 1", unknownHash]])
        }
    }
}
