import Foundation
import Testing

/// `orchestrator infer`: the inferred mapping, or the refusals naming their culprits.
@Suite("infer")
struct InferTests {
    @Test("an inferable pair exits 0 and lists the entity and property mappings")
    func inferablePair() throws {
        let result = try OrchestratorBinary.run(["infer", "--model", "migrations", "--from", "Recipes 1", "--to", "Recipes 3", "--format", "json"])
        #expect(result.exitCode == 0, "\(result)")
        let json = try jsonObject(result.stdout)
        #expect(json["inferable"] as? Bool == true)
        #expect((json["reasons"] as? [String])?.isEmpty == true)
        let entities = try #require(json["entityMappings"] as? [[String: Any]])
        #expect(entities.map { $0["kind"] as? String } == ["copy", "copy", "copy", "add"])
        let recipe = try #require(entities.first { $0["destination"] as? String == "Recipe" })
        let attributes = try #require(recipe["attributeMappings"] as? [[String: Any]])
        let renamed = try #require(attributes.first { $0["destination"] as? String == "directions" })
        #expect(renamed["kind"] as? String == "rename")
        #expect(renamed["source"] as? String == "instructions")
    }

    @Test("a refused pair exits 1 and names the entity and property")
    func refusedPair() throws {
        try withTemporaryFolder { folder in
            try "name: Shop\nversions: [Shop 1, Shop 2]\n".write(to: folder.appendingPathComponent("model.yaml"), atomically: true, encoding: .utf8)
            try "entities:\n  Item:\n    attributes:\n      name: string\n".write(to: folder.appendingPathComponent("Shop 1.yaml"), atomically: true, encoding: .utf8)
            try "entities:\n  Item:\n    attributes:\n      name: string\n      price: {type: decimal, optional: false}\n".write(to: folder.appendingPathComponent("Shop 2.yaml"), atomically: true, encoding: .utf8)
            let result = try OrchestratorBinary.run(["infer", "--model", folder.path, "--from", "Shop 1", "--to", "Shop 2", "--format", "json"])
            #expect(result.exitCode == 1, "\(result)")
            let json = try jsonObject(result.stdout)
            #expect(json["inferable"] as? Bool == false)
            let reasons = try #require(json["reasons"] as? [String])
            #expect(reasons.count == 1)
            #expect(reasons.first?.hasPrefix("entity Item, property price: added as non-optional without a default") == true, "\(reasons)")
        }
    }
}
