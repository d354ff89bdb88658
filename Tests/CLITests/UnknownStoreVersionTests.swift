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
                try assertCommand([command, "--model", "migrations"], databaseURL: url, errorOutput: """
                    error: store 'recipes' has model hash \(unknownHash), which matches no version of the model in its files \
                    or in the database's record of versions
                    """, exitCode: 1)
            }
            try assertCommand(["status", "--model", "migrations"], databaseURL: url, output: """
                store recipes: at an unknown version, model hash \(unknownHash)
                current version: 'Recipes 3', model hash \(PureCommandTests.recipeHashes["Recipes 3"]!)
                compatible: no, migration required (see `orchestrator plan`)
                """)

            #expect(try tableExists(schema: "recipes", table: "recipe", on: connection))
            #expect(try rowCount(schema: "recipes", table: "recipe", on: connection) == 1)
            let history = try connection.execute("SELECT kind, outcome FROM orchestrator.migrations ORDER BY id")
            #expect(history.rows == [["create", "succeeded"]], "only the first apply is in the history")
            let store = try connection.execute("SELECT version_name, model_hash FROM orchestrator.stores")
            #expect(store.rows == [["Recipes 1", unknownHash]])
        }
    }
}
