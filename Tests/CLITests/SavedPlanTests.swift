import Foundation
import PostgresClient
import Testing
import TestSupport

/// `plan --out FILE` and `apply --plan FILE`: a saved plan runs only as it was reviewed.
@Suite("saved plans: plan --out, apply --plan")
struct SavedPlanTests {
    @Test("plan --out saves every statement with the fingerprints, and apply --plan runs it", integration)
    func savedPlanRuns() throws {
        try withTemporaryFolder { folder in
            try TestDatabase.withFreshDatabase { url in
                try Pipeline.recipesAtVersionOne(url)
                let file = folder.appendingPathComponent("plan.json").path
                let plan = try OrchestratorBinary.run(["plan", "--model", "migrations", "--out", file], databaseURL: url)
                #expect(plan.exitCode == 0, "\(plan)")
                #expect(plan.stderr.isEmpty, "\(plan)")
                #expect(plan.stdoutLines.last == "plan saved to \(file): apply it with apply --plan \(file)", "\(plan)")

                let planJSON = try OrchestratorBinary.run(["plan", "--model", "migrations", "--format", "json"], databaseURL: url)
                let planned = try #require((try jsonObject(planJSON.stdout)["steps"] as? [[String: Any]])?.first)
                let saved = try jsonObject(String(contentsOfFile: file, encoding: .utf8))
                #expect(saved["format"] as? Int == 1)
                #expect(saved["store"] as? String == "recipes")
                #expect(saved["storeVersion"] as? String == "Recipes 1")
                #expect(saved["targetVersion"] as? String == "Recipes 3")
                let step = try #require((saved["steps"] as? [[String: Any]])?.first)
                #expect(step["statements"] as? [String] == planned["statements"] as? [String], "every statement, as plan prints it")
                let fingerprints = try #require(saved["fingerprints"] as? [String: Any])
                #expect((fingerprints["storeMetadata"] as? String).map(isSHA256Hex) == true)
                #expect((fingerprints["storeCatalog"] as? String).map(isSHA256Hex) == true)
                #expect((fingerprints["models"] as? [String: String]).map { Array($0.keys).sorted() } == ["Recipes 1", "Recipes 3"])
                let options = try #require(fingerprints["options"] as? [String: Any])
                #expect(options["targetVersion"] as? String == "Recipes 3")
                #expect(options["keepBackup"] as? Bool == true)
                #expect(options["streaming"] as? Bool == false)
                #expect(options["policies"] as? [String] == [])

                let apply = try OrchestratorBinary.run(["apply", "--model", "migrations", "--plan", file], databaseURL: url)
                #expect(apply.exitCode == 0, "\(apply)")
                #expect(apply.stderr.isEmpty, "\(apply)")
                #expect(apply.stdoutLines.count == 3, "\(apply)")
                #expect(apply.stdoutLines.first == "step 1 of 1: lightweight 'Recipes 1' -> 'Recipes 3' (\((planned["statements"] as? [String])?.count ?? 0) statements)", "\(apply)")
                #expect(apply.stdoutLines.last?.hasPrefix("store recipes: now at 'Recipes 3' (1 step(s), ") == true, "\(apply)")
                #expect(try Pipeline.value(url, "SELECT version_name FROM orchestrator.stores WHERE store = 'recipes'") == "Recipes 3")
            }
        }
    }

    @Test("apply --plan refuses, changing nothing, when the store was migrated since the plan was saved", integration)
    func storeChangedBetweenPlanAndApply() throws {
        try Pipeline.withSavedRecipesPlan { url, file in
            let meanwhile = try OrchestratorBinary.run(["apply", "--model", "migrations", "--to", "Recipes 2"], databaseURL: url)
            #expect(meanwhile.exitCode == 0, "\(meanwhile)")
            let before = try Pipeline.dump(url)

            let apply = try OrchestratorBinary.run(["apply", "--model", "migrations", "--plan", file], databaseURL: url)
            #expect(apply.exitCode == 1, "\(apply)")
            #expect(apply.stdout.isEmpty, "\(apply)")
            #expect(apply.stderr == """
                error: the plan saved in \(file) is not what apply would run now: \
                store metadata: the store was at 'Recipes 1' when the plan was saved, and is at 'Recipes 2' now; \
                store catalog: the tables, columns, constraints or indexes of schema recipes changed since the plan was saved; \
                model version 'Recipes 1' is no longer on the way; model version 'Recipes 2' is now on the way; \
                step 1: saved lightweight 'Recipes 1' -> 'Recipes 3', now lightweight 'Recipes 2' -> 'Recipes 3'; \
                nothing was changed (run plan --out again and review the new plan)

                """, "\(apply)")
            #expect(try Pipeline.dump(url) == before, "nothing was changed")
        }
    }

    @Test("apply --plan refuses, changing nothing, when a mapping model changed since the plan was saved", integration)
    func mappingModelChanged() throws {
        try withTemporaryFolder { folder in
            try TestDatabase.withFreshDatabase { url in
                let model = folder.appendingPathComponent("Kitchen")
                try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
                try Pipeline.kitchenAtVersionOne(url, model: model)
                let file = folder.appendingPathComponent("plan.json").path
                let plan = try OrchestratorBinary.run(["plan", "--model", model.path, "--out", file], databaseURL: url)
                #expect(plan.exitCode == 0, "\(plan)")
                let mappingFile = model.appendingPathComponent("kitchen-1-to-2.yaml")
                try Pipeline.kitchenMapping.replacingOccurrences(of: "/ 1.8", with: "/ 2.0").write(to: mappingFile, atomically: true, encoding: .utf8)
                let before = try Pipeline.dump(url)

                let apply = try OrchestratorBinary.run(["apply", "--model", model.path, "--plan", file], databaseURL: url)
                #expect(apply.exitCode == 1, "\(apply)")
                #expect(apply.stdout.isEmpty, "\(apply)")
                let error = try #require(apply.stderrLines.first, "\(apply)")
                #expect(apply.stderrLines.count == 1, "\(apply)")
                #expect(error.hasPrefix("error: the plan saved in \(file) is not what apply would run now: mapping model 'Kitchen 1' -> 'Kitchen 2' (\(mappingFile.path)) changed; step 1 statement "), "\(apply)")
                #expect(error.contains("/ 1.8"), "the saved statement is shown: \(apply)")
                #expect(error.contains("/ 2.0"), "and the one planned now: \(apply)")
                #expect(error.hasSuffix("; nothing was changed (run plan --out again and review the new plan)"), "\(apply)")
                #expect(try Pipeline.dump(url) == before, "nothing was changed")
            }
        }
    }

    @Test("apply --plan names an option given differently, and changes nothing", integration)
    func optionDiffers() throws {
        try Pipeline.withSavedRecipesPlan { url, file in
            let apply = try OrchestratorBinary.run(["apply", "--model", "migrations", "--plan", file, "--to", "Recipes 2"], databaseURL: url)
            #expect(apply.exitCode == 1, "\(apply)")
            #expect(apply.stderr.hasPrefix("error: the plan saved in \(file) is not what apply would run now: model version 'Recipes 2' is now on the way; model version 'Recipes 3' is no longer on the way; option --to: saved 'Recipes 3', now 'Recipes 2'; step 1: saved lightweight 'Recipes 1' -> 'Recipes 3', now lightweight 'Recipes 1' -> 'Recipes 2'; nothing was changed"), "\(apply)")
            #expect(try Pipeline.value(url, "SELECT version_name FROM orchestrator.stores") == "Recipes 1")
        }
    }

    @Test("a saved plan that is missing, not JSON, or not a plan is refused naming the file, before connecting", arguments: [
        ("missing", nil),
        ("not JSON", "{ this is not json"),
        ("no fingerprints", #"{"format": 1, "store": "recipes", "model": "Recipes", "targetVersion": "Recipes 3", "steps": []}"#),
        ("another format", #"{"format": 7}"#),
    ] as [(String, String?)])
    func unreadablePlanFile(name: String, contents: String?) throws {
        try withTemporaryFolder { folder in
            let file = folder.appendingPathComponent("plan.json")
            if let contents { try contents.write(to: file, atomically: true, encoding: .utf8) }
            // No database: the file is read first, and nothing is attempted with a bad one.
            let apply = try OrchestratorBinary.run(["apply", "--model", "migrations", "--plan", file.path], databaseURL: "postgres://nobody@127.0.0.1:1/none")
            #expect(apply.exitCode == 1, "\(apply)")
            #expect(apply.stdout.isEmpty, "\(apply)")
            let prefix = "error: cannot use the saved plan \(file.path): "
            #expect(apply.stderr.hasPrefix(prefix), "\(apply)")
            let reason = String(apply.stderr.dropFirst(prefix.count))
            switch name {
            case "missing": #expect(reason.hasPrefix("it cannot be read ("), "\(apply)")
            case "not JSON": #expect(reason == "it is not a plan written by `orchestrator plan --out` (not JSON)\n", "\(apply)")
            case "no fingerprints": #expect(reason == "it is not a plan written by `orchestrator plan --out` (no field fingerprints)\n", "\(apply)")
            default: #expect(reason == "it has format 7, and this orchestrator reads format 1 (run plan --out again)\n", "\(apply)")
            }
        }
    }

    @Test("plan --out to a folder that does not exist fails naming the file, and prints no plan", integration)
    func unwritablePlanFile() throws {
        try TestDatabase.withFreshDatabase { url in
            let file = "/nonexistent-orchestrator-folder/plan.json"
            let plan = try OrchestratorBinary.run(["plan", "--model", "migrations", "--out", file], databaseURL: url)
            #expect(plan.exitCode == 1, "\(plan)")
            #expect(plan.stdout.isEmpty, "\(plan)")
            #expect(plan.stderr.hasPrefix("error: cannot save the plan to \(file): "), "\(plan)")
            #expect(plan.stderrLines.count == 1, "\(plan)")
        }
    }

    @Test("--format sql and --dry-run do not go with --online: a usage error naming both", arguments: [
        (["plan", "--model", "migrations", "--format", "sql", "--online"],
         "Error: --format sql writes the plan as one transaction, and --online runs it in phases that commit separately: choose one"),
        (["apply", "--model", "migrations", "--dry-run", "--online"],
         "Error: --dry-run rehearses every step in one transaction, and --online commits in phases (CREATE INDEX CONCURRENTLY cannot run in a transaction): rehearse without --online"),
    ])
    func exclusiveWithOnline(arguments: [String], error: String) throws {
        let result = try OrchestratorBinary.run(arguments)
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(result.stderrLines.first == error, "\(result)")
    }
}
