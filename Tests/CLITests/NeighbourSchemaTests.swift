import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// A heavyweight step drops or renames only the schemas it made beside its store: never
/// another store, never a schema orchestrator did not create, and the backup of a chain stays
/// the store as it was before the run, even when the run is finished by another.
@Suite("neighbour schemas")
struct NeighbourSchemaTests {
    static let model = ["apply", "--model"]

    /// The store `kitchen` at Kitchen 1 with rows, and a store of its own renamed to `neighbour`
    /// (as a store created before names ending in `~…` were refused), holding 30 chefs.
    static func withKitchenAndNeighbour(
        named neighbour: String, _ body: (_ folder: URL, _ url: String, _ connection: PostgresConnection) throws -> Void
    ) throws {
        try withAppliedStore(stores: ["kitchen", "other"]) { folder, url, connection in
            try connection.execute("INSERT INTO kitchen.recipe (name, temperature, amount) SELECT 'r' || i, i, i FROM generate_series(1, 40) AS i")
            try connection.execute("INSERT INTO other.chef (name) SELECT 'neighbour chef ' || i FROM generate_series(1, 30) AS i")
            if neighbour != "other" {
                try connection.execute("ALTER SCHEMA other RENAME TO \(ident: neighbour)")
                try connection.execute("UPDATE orchestrator.stores SET store = \(neighbour) WHERE store = 'other'")
            }
            try body(folder, url, connection)
        }
    }

    static func expectUntouched(_ neighbour: String, on connection: PostgresConnection) throws {
        #expect(try connection.execute("SELECT count(*) AS n FROM \(ident: neighbour, "chef") WHERE name LIKE 'neighbour chef %'").int(0, "n") == 30)
        #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 1")
        #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe").int(0, "n") == 40)
    }

    @Test("a store named <store>~ is never dropped for the backup: refused naming it, nothing changed", integration)
    func aStoreInThePlaceOfTheBackupIsRefused() throws {
        try Self.withKitchenAndNeighbour(named: "kitchen~") { folder, url, connection in
            let plan = try OrchestratorBinary.run(["plan", "--model", folder.path], databaseURL: url)
            #expect(plan.stdout.contains("\"kitchen~\", which would be the backup of store kitchen, is a store of its own"), "\(plan)")
            let refused = try OrchestratorBinary.run(["apply", "--model", folder.path], databaseURL: url)
            #expect(refused.exitCode == 1, "\(refused)")
            #expect(refused.stderr.contains("schema \"kitchen~\", which would be the backup of store kitchen, is a store of its own"), "\(refused)")
            try Self.expectUntouched("kitchen~", on: connection)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'kitchen~staging'").int(0, "n") == 0)
        }
    }

    @Test("a schema orchestrator did not make in the place of the backup is refused; --no-backup leaves it alone", integration)
    func aForeignSchemaInThePlaceOfTheBackupIsRefused() throws {
        try Self.withKitchenAndNeighbour(named: "other") { folder, url, connection in
            try connection.execute("CREATE SCHEMA \"kitchen~\"; CREATE TABLE \"kitchen~\".notes (text text); INSERT INTO \"kitchen~\".notes VALUES ('mine')")
            let refused = try OrchestratorBinary.run(["apply", "--model", folder.path], databaseURL: url)
            #expect(refused.exitCode == 1, "\(refused)")
            #expect(refused.stderr.contains("schema \"kitchen~\" exists and was not made by orchestrator as the backup of store kitchen"), "\(refused)")
            #expect(try connection.execute("SELECT text FROM \"kitchen~\".notes").value(0, "text") == "mine")
            try Self.expectUntouched("other", on: connection)

            let applied = try OrchestratorBinary.run(["apply", "--model", folder.path, "--no-backup"], databaseURL: url)
            #expect(applied.exitCode == 0, "\(applied)")
            #expect(try connection.execute("SELECT text FROM \"kitchen~\".notes").value(0, "text") == "mine")
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe WHERE total_cost BETWEEN 1 AND 40").int(0, "n") == 40)
        }
    }

    @Test("a store named <store>~staging survives apply and the --restart its refusal names", integration)
    func aStoreInThePlaceOfTheStagingSchemaIsRefusedEvenWithRestart() throws {
        try Self.withKitchenAndNeighbour(named: "kitchen~staging") { folder, url, connection in
            for restart in [[], ["--restart"]] {
                let refused = try OrchestratorBinary.run(["apply", "--model", folder.path] + restart, databaseURL: url)
                #expect(refused.exitCode == 1, "\(refused)")
                #expect(refused.stderr.contains("schema \"kitchen~staging\", which would be the staging schema of store kitchen, is a store of its own"), "\(refused)")
                try Self.expectUntouched("kitchen~staging", on: connection)
            }
            // The other way round: no new store is created beside it under the name it derives from.
            let created = try OrchestratorBinary.run(["apply", "--model", folder.path, "--store", "kitchen"], databaseURL: url)
            #expect(created.exitCode == 1, "\(created)")
            try connection.execute("DROP SCHEMA kitchen CASCADE; DELETE FROM orchestrator.stores WHERE store = 'kitchen'")
            let refused = try OrchestratorBinary.run(["apply", "--model", folder.path, "--store", "kitchen"], databaseURL: url)
            #expect(refused.exitCode == 1, "\(refused)")
            #expect(refused.stderr.contains("store name kitchen would have its backup and staging schemas where store kitchen~staging is"), "\(refused)")
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'kitchen'").int(0, "n") == 0)
        }
    }

    @Test("store names ending in ~, ~staging or ~retired are refused", integration)
    func reservedStoreNamesAreRefused() throws {
        try withTemporaryFolder { folder in
            try KitchenModel.write(in: folder)
            try TestDatabase.withFreshDatabase { url in
                for store in ["kitchen~", "kitchen~staging", "x~retired"] {
                    let refused = try OrchestratorBinary.run(["apply", "--model", folder.path, "--store", store], databaseURL: url)
                    #expect(refused.exitCode == 1, "\(refused)")
                    #expect(refused.stderr.contains("store name \(store) ends with"), "\(refused)")
                }
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname LIKE '%~%'").int(0, "n") == 0)
            }
        }
    }

    /// Kitchen 3 requires a recipe's name: the chain's second heavyweight step fails on the
    /// recipe without one, after the first has swapped.
    static func writeChain(in folder: URL) throws {
        try KitchenModel.write(in: folder)
        try write("name: Kitchen\nversions: [Kitchen 1, Kitchen 2, Kitchen 3]\n", to: "model.yaml", in: folder)
        try write("""
            entities:
              Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: author, toMany: true}}}
              Recipe: {attributes: {title: {type: string, optional: false}, temperatureC: double, totalCost: int64}, relationships: {author: {destination: Chef, inverse: recipes}}}
            """, to: "Kitchen 3.yaml", in: folder)
        try write("""
            source: Kitchen 2
            destination: Kitchen 3
            entityMappings:
              - {name: ChefToChef, type: copy, source: Chef, destination: Chef}
              - name: RecipeToRecipe
                type: transform
                source: Recipe
                destination: Recipe
                attributes: {title: "$source.name"}
            """, to: "kitchen-2-to-3.yaml", in: folder)
    }

    @Test("a chain failing after its first swap, finished by the next apply, keeps the store as it was before as the backup", integration)
    func theBackupOfAnInterruptedChainIsTheStoreBeforeIt() throws {
        try withAppliedStore(model: Self.writeChain) { folder, url, connection in
            try connection.execute("INSERT INTO kitchen.recipe (name, temperature, amount) SELECT CASE WHEN i = 7 THEN NULL ELSE 'r' || i END, i, i FROM generate_series(1, 30) AS i")
            let original = try connection.execute("SELECT coalesce(name, '-') || '|' || temperature || '|' || amount AS line FROM kitchen.recipe ORDER BY _pk").rows

            let failed = try OrchestratorBinary.run(["apply", "--model", folder.path], databaseURL: url)
            #expect(failed.exitCode == 1, "\(failed)")
            #expect(failed.stderr.contains("step 2 of 2"), "\(failed)")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 2")

            // Fixed; the write makes the passes kept stale, so --restart.
            try connection.execute("UPDATE kitchen.recipe SET name = 'named' WHERE name IS NULL")
            let finished = try OrchestratorBinary.run(["apply", "--model", folder.path, "--restart", "--format", "json"], databaseURL: url)
            #expect(finished.exitCode == 0, "\(finished)")
            #expect(try jsonObject(try #require(finished.stdoutLines.last))["backupSchema"] as? String == "kitchen~", "\(finished)")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 3")
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe WHERE title IS NOT NULL").int(0, "n") == 30)

            // The backup is Kitchen 1's store, rows and all, and recorded as such.
            let backup = try connection.execute("SELECT coalesce(name, '-') || '|' || temperature || '|' || amount AS line FROM \"kitchen~\".recipe ORDER BY _pk").rows
            #expect(backup == original)
            #expect(try connection.execute("SELECT version_name FROM orchestrator.store_schemas WHERE schema = 'kitchen~' AND role = 'backup' AND chain_finished").value(0, "version_name") == "Kitchen 1")
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname IN ('kitchen~staging', 'kitchen~retired')").int(0, "n") == 0)
        }
    }
}

extension NeighbourSchemaTests {
    @Test("metadata of layout 1 is upgraded in place, adopting the backup its history proves orchestrator made", integration)
    func layoutOneMetadataIsUpgradedAndItsBackupAdopted() throws {
        try withTemporaryFolder { folder in
            try Self.writeChain(in: folder)
            try TestDatabase.withFreshDatabase { url in
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                for version in ["Kitchen 1", "Kitchen 2"] {
                    let applied = try OrchestratorBinary.run(["apply", "--model", folder.path, "--to", version], databaseURL: url)
                    #expect(applied.exitCode == 0, "\(applied)")
                    if version == "Kitchen 1" {
                        try connection.execute("INSERT INTO kitchen.recipe (name, temperature, amount) SELECT 'r' || i, i, i FROM generate_series(1, 25) AS i")
                    }
                }
                // As an earlier release left it: no store_schemas, layout 1, a backup made.
                try connection.execute("DROP TABLE orchestrator.store_schemas")
                try connection.execute("UPDATE orchestrator.meta SET value = '1' WHERE key = 'layout_version'")
                #expect(try connection.execute("SELECT count(*) AS n FROM \"kitchen~\".recipe").int(0, "n") == 25)

                let applied = try OrchestratorBinary.run(["apply", "--model", folder.path], databaseURL: url)
                #expect(applied.exitCode == 0, "\(applied)")
                #expect(try connection.execute("SELECT value FROM orchestrator.meta WHERE key = 'layout_version'").value(0, "value") == "4")
                #expect(try connection.execute("SELECT version_name FROM orchestrator.store_schemas WHERE schema = 'kitchen~'").value(0, "version_name") == "Kitchen 2")
                #expect(try connection.execute("SELECT count(*) AS n FROM \"kitchen~\".recipe WHERE temperature_c IS NOT NULL").int(0, "n") == 25)
                #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe WHERE title LIKE 'r%'").int(0, "n") == 25)
            }
        }
    }
}
