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

            let status = try OrchestratorBinary.run(["status", "--model", "migrations", "--format", "json"], databaseURL: url)
            #expect(status.exitCode == 0, "\(status)")
            let report = try jsonObject(status.stdout)
            #expect(report["exists"] as? Bool == true, "\(status)")
            #expect(report["compatible"] as? Bool == true, "\(status)")
            #expect(report["storeVersion"] as? String == "Recipes 3", "\(status)")
            #expect(report["currentVersion"] as? String == "Recipes 3", "\(status)")
            let modelHash = try #require(report["modelHash"] as? String, "\(status)")
            #expect(isSHA256Hex(modelHash))
            #expect(report["storeModelHash"] as? String == modelHash, "\(status)")

            let plan = try OrchestratorBinary.run(["plan", "--model", "migrations", "--format", "json"], databaseURL: url)
            #expect(plan.exitCode == 0, "\(plan)")
            let planned = try jsonObject(plan.stdout)
            #expect(planned["upToDate"] as? Bool == true, "\(plan)")
            #expect((planned["steps"] as? [Any])?.isEmpty == true, "\(plan)")

            let again = try OrchestratorBinary.run(["apply", "--model", "migrations"], databaseURL: url)
            #expect(again.exitCode == 0, "\(again)")
            #expect(again.stdoutLines == ["store recipes: already up to date at 'Recipes 3'; nothing to do"], "\(again)")
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

            let status = try OrchestratorBinary.run(
                ["status", "--model", "migrations", "--store", "kitchen", "--format", "json"], databaseURL: url
            )
            #expect(status.exitCode == 0, "\(status)")
            let report = try jsonObject(status.stdout)
            #expect(report["store"] as? String == "kitchen", "\(status)")
            #expect(report["storeVersion"] as? String == "Recipes 2", "\(status)")
            #expect(report["compatible"] as? Bool == false, "\(status)")
        }
    }

    @Test("an unknown --to version is a usage error and writes nothing", integration)
    func unknownTargetVersion() throws {
        try TestDatabase.withFreshDatabase { url in
            for command in ["plan", "apply"] {
                let result = try OrchestratorBinary.run([command, "--model", "migrations", "--to", "Recipes 9"], databaseURL: url)
                #expect(result.exitCode == 64, "\(result)")
                #expect(result.stderr == "error: no version named 'Recipes 9' in migrations (versions: Recipes 1, Recipes 2, Recipes 3)\n", "\(result)")
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
                try connection.execute("ANALYZE shop.item")

                let plan = try OrchestratorBinary.run(["plan", "--model", folder.path, "--format", "json"], databaseURL: url)
                let planned = try jsonObject(plan.stdout)
                #expect(planned["needsAllowDataLoss"] as? Bool == true, "\(plan)")
                let step = try #require((planned["steps"] as? [[String: Any]])?.first, "\(plan)")
                #expect((step["hazards"] as? [[String: Any]])?.contains { $0["code"] as? String == "dataLoss" } == true, "\(plan)")
                #expect(step["rowEstimate"] as? Int == 300, "\(plan)")

                let refused = try OrchestratorBinary.run(["apply", "--model", folder.path], databaseURL: url)
                #expect(refused.exitCode == 1, "\(refused)")
                #expect(refused.stderrLines.count == 1, "\(refused)")
                #expect(refused.stderr.contains("--allow-data-loss"), "\(refused)")
                #expect(refused.stderr.contains("note"), "\(refused)")
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
