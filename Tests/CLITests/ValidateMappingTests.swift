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
            let mapping = folder.appendingPathComponent("kitchen-1-to-2.yaml").path
            try assertCommand(["validate", "--model", folder.path], output: """
                mapping model \(mapping): 'Kitchen 1' -> 'Kitchen 2', 1 entity mapping(s): valid
                Kitchen: 2 version(s), current 'Kitchen 2': valid
                """)
            try assertCommand(["validate", "--model", folder.path, "--format", "json"], output: """
                {"model":"Kitchen","path":"\(folder.path)","currentVersion":"Kitchen 2","valid":true,"versions":[\
                {"name":"Kitchen 1","valid":true,"problems":[]},{"name":"Kitchen 2","valid":true,"problems":[]}],\
                "mappingModels":[{"file":"\(mapping)","source":"Kitchen 1","destination":"Kitchen 2","entityMappings":1,"valid":true,"problems":[]}],\
                "warnings":[]}
                """)
        }
    }

    @Test("a misspelt key path fails validate, naming the entity mapping and the property")
    func misspeltKeyPath() throws {
        try withTemporaryFolder { folder in
            try Self.writeModel(in: folder, mapping: Self.mapping.replacingOccurrences(of: "$source.temperature", with: "$source.temprature"))
            let mapping = folder.appendingPathComponent("kitchen-1-to-2.yaml").path
            try assertCommand(["validate", "--model", folder.path], output: """
                mapping model \(mapping): 'Kitchen 1' -> 'Kitchen 2', 1 entity mapping(s): 1 problem(s)
                error: \(mapping): entity mapping RecipeToRecipe, property temperatureC: \
                Recipe has no property 'temprature' in version Kitchen 1 ($source.temprature): ($source.temprature - 32.0) / 1.8
                Kitchen: 2 version(s), current 'Kitchen 2': 1 problem(s)
                """, exitCode: 1)
        }
    }

    @Test("a parse error in a filter is reported with the entity mapping")
    func badFilter() throws {
        try withTemporaryFolder { folder in
            try Self.writeModel(in: folder, mapping: Self.mapping.replacingOccurrences(of: "amount > 100", with: "amount >"))
            let mapping = folder.appendingPathComponent("kitchen-1-to-2.yaml").path
            try assertCommand(["validate", "--model", folder.path], output: """
                mapping model \(mapping): 'Kitchen 1' -> 'Kitchen 2', 1 entity mapping(s): 1 problem(s)
                error: \(mapping): entity mapping RecipeToRecipe: filter: amount > ^ expected an operand at column 8
                Kitchen: 2 version(s), current 'Kitchen 2': 1 problem(s)
                """, exitCode: 1)
        }
    }

    /// The mapping's filter leaves rows out: a dataLoss hazard, so `apply` needs
    /// --allow-data-loss even though the old store is kept as the backup.
    @Test("plan and apply run a mapping model beside the model as a heavyweight step", integration)
    func planRunsAnExplicitMapping() throws {
        try withAppliedStore(model: { try Self.writeModel(in: $0, mapping: Self.mapping) }) { folder, url, _ in
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
