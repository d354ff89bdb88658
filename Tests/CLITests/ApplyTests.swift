import Foundation
import PostgresClient
import Testing
import TestSupport

/// plan, apply and status on a fresh database each.
@Suite("plan, apply and status")
struct ApplyTests {
    @Test("apply creates the store at the current version; status, plan and a second apply agree", integration)
    func applyThenStatusPlanAndApplyAgain() throws {
        try TestDatabase.withFreshDatabase { url in
            let apply = try OrchestratorBinary.run(["apply", "--model", "migrations"], databaseURL: url)
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(apply.stdoutLines.last?.hasPrefix("store recipes: now at 'Recipes 3' (1 step(s), ") == true, "\(apply)")
            #expect(apply.stderr.isEmpty, "\(apply)")

            let hash = PureCommandTests.recipeHashes["Recipes 3"]!
            try assertCommand(["status", "--model", "migrations"], databaseURL: url, output: """
                store recipes: at 'Recipes 3', model hash \(hash)
                current version: 'Recipes 3', model hash \(hash)
                compatible: yes
                drift: none from the contract of 'Recipes 3'
                """)
            try assertCommand(["status", "--model", "migrations", "--format", "json"], databaseURL: url, output: """
                {"store":"recipes","model":"Recipes","exists":true,"compatible":true,"storeVersion":"Recipes 3","currentVersion":"Recipes 3",\
                "modelHash":"\(hash)","storeModelHash":"\(hash)","driftCheckedAgainst":"Recipes 3","drift":[]}
                """)
            try assertCommand(["plan", "--model", "migrations"], databaseURL: url, output: """
                store recipes: up to date at 'Recipes 3' (model hash \(hash)); nothing to do
                """)
            try assertCommand(["plan", "--model", "migrations", "--format", "json"], databaseURL: url, output: """
                {"store":"recipes","model":"Recipes","upToDate":true,"status":"upToDate","storeVersion":"Recipes 3","targetVersion":"Recipes 3",\
                "currentVersion":"Recipes 3","modelHash":"\(hash)","storeModelHash":"\(hash)","migrationRequired":false,"executable":true,\
                "needsAllowDataLoss":false,"blockers":[],"blockerDetails":[],"steps":[]}
                """)
            try assertCommand(["apply", "--model", "migrations"], databaseURL: url, output: """
                store recipes: already up to date at 'Recipes 3'; nothing to do
                """)
        }
    }

    @Test("plan on an empty database shows one create step and creates nothing", integration)
    func planOnEmptyDatabase() throws {
        try TestDatabase.withFreshDatabase { url in
            let plan = try OrchestratorBinary.run(["plan", "--model", "migrations", "--format", "json"], databaseURL: url)
            #expect(plan.exitCode == 0, "\(plan)")
            let planned = try jsonObject(plan.stdout)
            #expect(planned["upToDate"] as? Bool == false, "\(plan)")
            let steps = try #require(planned["steps"] as? [[String: Any]], "\(plan)")
            #expect(steps.count == 1, "\(plan)")
            let step = try #require(steps.first)
            #expect(step["kind"] as? String == "create", "\(plan)")
            #expect(step["to"] as? String == "Recipes 3", "\(plan)")
            let statements = try #require(step["statements"] as? [String], "\(plan)")
            #expect(statements.first?.hasPrefix("CREATE SCHEMA \"recipes\"") == true, "\(plan)")

            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            #expect(try !schemaExists("recipes", on: connection))
            #expect(try !schemaExists("orchestrator", on: connection), "plan must not write metadata either")
        }
    }

    @Test("--store names the schema the store lives in", integration)
    func storeOptionNamesTheSchema() throws {
        try TestDatabase.withFreshDatabase { url in
            let apply = try OrchestratorBinary.run(
                ["apply", "--model", "migrations", "--store", "kitchen", "--to", "Recipes 2"], databaseURL: url
            )
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(apply.stdoutLines.last?.hasPrefix("store kitchen: now at 'Recipes 2'") == true, "\(apply)")

            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            #expect(try schemaExists("kitchen", on: connection))
            #expect(try tableExists(schema: "kitchen", table: "recipe", on: connection))
            #expect(try !schemaExists("recipes", on: connection))

            let hashes = PureCommandTests.recipeHashes
            try assertCommand(["status", "--model", "migrations", "--store", "kitchen", "--format", "json"], databaseURL: url, output: """
                {"store":"kitchen","model":"Recipes","exists":true,"compatible":false,"storeVersion":"Recipes 2","currentVersion":"Recipes 3",\
                "modelHash":"\(hashes["Recipes 3"]!)","storeModelHash":"\(hashes["Recipes 2"]!)","driftCheckedAgainst":"Recipes 2","drift":[]}
                """)
        }
    }

    @Test("an unknown --to version is a usage error and writes nothing", integration)
    func unknownTargetVersion() throws {
        try TestDatabase.withFreshDatabase { url in
            for command in ["plan", "apply"] {
                try assertCommand(
                    [command, "--model", "migrations", "--to", "Recipes 9"], databaseURL: url,
                    errorOutput: "error: no version named 'Recipes 9' in migrations (versions: Recipes 1, Recipes 2, Recipes 3)", exitCode: 64
                )
            }
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            #expect(try !schemaExists("orchestrator", on: connection))
        }
    }

    @Test("a step that loses data runs only with --allow-data-loss", integration)
    func dataLossNeedsTheFlag() throws {
        try withTemporaryFolder { folder in
            try "name: Shop\nversions: [Shop 1, Shop 2]\n".write(to: folder.appendingPathComponent("model.yaml"), atomically: true, encoding: .utf8)
            try "entities:\n  Item:\n    attributes:\n      name: string\n      note: string\n".write(to: folder.appendingPathComponent("Shop 1.yaml"), atomically: true, encoding: .utf8)
            try "entities:\n  Item:\n    attributes:\n      name: string\n".write(to: folder.appendingPathComponent("Shop 2.yaml"), atomically: true, encoding: .utf8)
            try TestDatabase.withFreshDatabase { url in
                let create = try OrchestratorBinary.run(["apply", "--model", folder.path, "--to", "Shop 1"], databaseURL: url)
                #expect(create.exitCode == 0, "\(create)")
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                try connection.execute("INSERT INTO shop.item (name, note) SELECT 'item ' || g, 'note ' || g FROM generate_series(1, 300) g")
                // The INSERT's counts reach the statistics first: flushed after ANALYZE (at most
                // once a second), they would be added to its count and double the estimate (600).
                try connection.execute("SELECT pg_stat_force_next_flush()")
                try connection.execute("ANALYZE shop.item")

                let (from, to) = ("542a1d6303e2cb17a55bfec1b14af17277674bda0d75f3f073e81e9c7e98a6b3", "0c78c8dd5b11aa861cb0095379b539a2fbef441f40f8228b088da8a1aefcc4c5")
                // The SQL script needs the same consent as apply, and without it nothing is printed.
                let script = try OrchestratorBinary.run(["plan", "--model", folder.path, "--format", "sql"], databaseURL: url)
                #expect(script.exitCode == 1, "\(script)")
                #expect(script.stdout.isEmpty, "\(script)")
                #expect(script.stderr.contains("Item.note removed") && script.stderr.contains("--allow-data-loss"), "\(script)")
                let allowedScript = try OrchestratorBinary.run(["plan", "--model", folder.path, "--format", "sql", "--allow-data-loss"], databaseURL: url)
                #expect(allowedScript.exitCode == 0, "\(allowedScript)")
                #expect(allowedScript.stdout.contains("DROP COLUMN \"note\""), "\(allowedScript)")
                #expect(try connection.execute("SELECT count(note) AS n FROM shop.item").int(0, "n") == 300)
                try assertCommand(["status", "--model", folder.path], databaseURL: url, output: """
                    store shop: at 'Shop 1', model hash \(from)
                    current version: 'Shop 2', model hash \(to)
                    compatible: no, migration required (see `orchestrator plan`)
                    drift: none from the contract of 'Shop 1'
                    """)
                try assertCommand(["plan", "--model", folder.path], databaseURL: url, output: """
                    store shop: at 'Shop 1' (model hash \(from)), target 'Shop 2' (model hash \(to))
                    migration required

                    -- step 1 of 1: lightweight 'Shop 1' -> 'Shop 2', 1 statements, about 300 rows
                    -- hazard dataLoss: Item.note removed: its values are dropped
                    -- drop column item.note (removed from the model) [lock: ACCESS EXCLUSIVE]
                    ALTER TABLE "shop"."item" DROP COLUMN "note";

                    apply needs --allow-data-loss: Item.note removed: its values are dropped
                    """)
                let drop = #"ALTER TABLE \"shop\".\"item\" DROP COLUMN \"note\""#
                try assertCommand(["plan", "--model", folder.path, "--format", "json"], databaseURL: url, output: """
                    {"store":"shop","model":"Shop","upToDate":false,"status":"migrationRequired","storeVersion":"Shop 1","targetVersion":"Shop 2",\
                    "currentVersion":"Shop 2","modelHash":"\(to)","storeModelHash":"\(from)","migrationRequired":true,"executable":true,\
                    "needsAllowDataLoss":true,"blockers":[],"blockerDetails":[],"steps":[{"kind":"lightweight","from":"Shop 1","to":"Shop 2","statements":["\(drop)"],\
                    "statementDetails":[{"sql":"\(drop)","lock":"ACCESS EXCLUSIVE","summary":"drop column item.note (removed from the model)"}],\
                    "hazards":[{"code":"dataLoss","message":"Item.note removed: its values are dropped"}],"rowEstimate":300,\
                    "stagingSchema":null,"backupSchema":null,"passesDone":0,"passes":[]}]}
                    """)

                try assertCommand(["apply", "--model", folder.path], databaseURL: url, errorOutput: """
                    error: the migration loses data: step 1 of 1 ('Shop 1' -> 'Shop 2') Item.note removed: its values are dropped; \
                    nothing was changed (run again with --allow-data-loss to accept the loss)
                    """, exitCode: 1)
                #expect(try columns(in: "shop", table: "item", on: connection).map(\.name).contains("note"))
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores").rows == [["Shop 1"]])

                let allowed = try OrchestratorBinary.run(["apply", "--model", folder.path, "--allow-data-loss"], databaseURL: url)
                #expect(allowed.exitCode == 0, "\(allowed)")
                #expect(try !columns(in: "shop", table: "item", on: connection).map(\.name).contains("note"))
                #expect(try rowCount(schema: "shop", table: "item", on: connection) == 300)
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores").rows == [["Shop 2"]])
            }
        }
    }
}
