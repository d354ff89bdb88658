import Foundation
import Testing
import TestSupport

/// `validate` loads the mapping models beside the model (or in --mappings folders) and checks
/// each against the versions it maps between.
@Suite("validate with mapping models")
struct ValidateMappingTests {
    static func writeModel(in folder: URL, mapping: String) throws {
        try "name: Kitchen\nversions: [Kitchen 1, Kitchen 2]\n".write(to: folder.appendingPathComponent("model.yaml"), atomically: true, encoding: .utf8)
        try "entities:\n  Recipe:\n    attributes:\n      temperature: double\n      amount: int32\n".write(to: folder.appendingPathComponent("Kitchen 1.yaml"), atomically: true, encoding: .utf8)
        try "entities:\n  Recipe:\n    attributes:\n      temperatureC: double\n      totalCost: int64\n".write(to: folder.appendingPathComponent("Kitchen 2.yaml"), atomically: true, encoding: .utf8)
        try mapping.write(to: folder.appendingPathComponent("kitchen-1-to-2.yaml"), atomically: true, encoding: .utf8)
    }

    static let mapping = """
        source: Kitchen 1
        destination: Kitchen 2
        entityMappings:
          - name: RecipeToRecipe
            type: transform
            source: Recipe
            destination: Recipe
            filter: "amount > 100"
            attributes:
              temperatureC: "($source.temperature - 32.0) / 1.8"
              totalCost: "$source.amount"
        """

    @Test("a mapping model beside the model is checked and reported valid")
    func validMapping() throws {
        try withTemporaryFolder { folder in
            try Self.writeModel(in: folder, mapping: Self.mapping)
            let result = try OrchestratorBinary.run(["validate", "--model", folder.path, "--format", "json"])
            #expect(result.exitCode == 0, "\(result)")
            let json = try jsonObject(result.stdout)
            let mappings = try #require(json["mappingModels"] as? [[String: Any]], "\(result)")
            #expect(mappings.count == 1)
            #expect(mappings.first?["source"] as? String == "Kitchen 1")
            #expect(mappings.first?["destination"] as? String == "Kitchen 2")
            #expect(mappings.first?["valid"] as? Bool == true, "\(result)")
        }
    }

    @Test("a misspelt key path fails validate, naming the entity mapping and the property")
    func misspeltKeyPath() throws {
        try withTemporaryFolder { folder in
            try Self.writeModel(in: folder, mapping: Self.mapping.replacingOccurrences(of: "$source.temperature", with: "$source.temprature"))
            let result = try OrchestratorBinary.run(["validate", "--model", folder.path])
            #expect(result.exitCode == 1, "\(result)")
            let errors = result.stdoutLines.filter { $0.hasPrefix("error: ") }
            #expect(errors.count == 1, "\(result)")
            #expect(errors.first?.contains("kitchen-1-to-2.yaml") == true, "\(result)")
            #expect(errors.first?.contains("entity mapping RecipeToRecipe") == true, "\(result)")
            #expect(errors.first?.contains("temperatureC") == true, "\(result)")
            #expect(errors.first?.contains("temprature") == true, "\(result)")
        }
    }

    @Test("a parse error in a filter is reported with the entity mapping")
    func badFilter() throws {
        try withTemporaryFolder { folder in
            try Self.writeModel(in: folder, mapping: Self.mapping.replacingOccurrences(of: "amount > 100", with: "amount >"))
            let result = try OrchestratorBinary.run(["validate", "--model", folder.path])
            #expect(result.exitCode == 1, "\(result)")
            #expect(result.stdoutLines.contains { $0.hasPrefix("error: ") && $0.contains("RecipeToRecipe") && $0.contains("filter") }, "\(result)")
        }
    }

    /// The mapping's filter leaves rows out: a dataLoss hazard, so `apply` needs
    /// --allow-data-loss even though the old store is kept as the backup.
    @Test("plan and apply run a mapping model beside the model as a heavyweight step", integration)
    func planRunsAnExplicitMapping() throws {
        try withTemporaryFolder { folder in
            try Self.writeModel(in: folder, mapping: Self.mapping)
            try TestDatabase.withFreshDatabase { url in
                let create = try OrchestratorBinary.run(["apply", "--model", folder.path, "--to", "Kitchen 1"], databaseURL: url)
                #expect(create.exitCode == 0, "\(create)")
                let plan = try OrchestratorBinary.run(["plan", "--model", folder.path, "--format", "json"], databaseURL: url)
                let planned = try jsonObject(plan.stdout)
                #expect(planned["executable"] as? Bool == true, "\(plan)")
                #expect(planned["needsAllowDataLoss"] as? Bool == true, "\(plan)")
                let steps = try #require(planned["steps"] as? [[String: Any]], "\(plan)")
                #expect(steps.map { $0["kind"] as? String } == ["heavyweight"], "\(plan)")
                let losses = (steps[0]["hazards"] as? [[String: Any]] ?? []).filter { $0["code"] as? String == "dataLoss" }
                #expect(losses.map { $0["entity"] as? String } == ["Recipe"], "\(plan)")

                let refused = try OrchestratorBinary.run(["apply", "--model", folder.path], databaseURL: url)
                #expect(refused.exitCode == 1, "\(refused)")
                #expect(refused.stderr.contains("rows of Recipe do not reach the new store: those the filter of RecipeToRecipe rejects; kept only in the backup schema kitchen~"), "\(refused)")
                #expect(refused.stderr.contains("--allow-data-loss"), "\(refused)")
                let unchanged = try OrchestratorBinary.run(["status", "--model", folder.path, "--format", "json"], databaseURL: url)
                #expect(try jsonObject(unchanged.stdout)["storeVersion"] as? String == "Kitchen 1", "\(unchanged)")

                let apply = try OrchestratorBinary.run(["apply", "--model", folder.path, "--allow-data-loss"], databaseURL: url)
                #expect(apply.exitCode == 0, "\(apply)")
                #expect(apply.stdout.contains("heavyweight") || apply.stderr.contains("heavyweight"), "\(apply)")
                let status = try OrchestratorBinary.run(["status", "--model", folder.path, "--format", "json"], databaseURL: url)
                #expect(try jsonObject(status.stdout)["compatible"] as? Bool == true, "\(status)")
            }
        }
    }
}
