import Foundation
import Testing

/// `orchestrator infer`: the inferred mapping, or the refusals naming their culprits. The
/// output is the contract: each test compares all of it and the exit code.
@Suite("infer")
struct InferTests {
    static let recipes = ["infer", "--model", "migrations", "--from", "Recipes 1", "--to", "Recipes 3"]

    @Test("an inferable pair exits 0 and lists the entity and property mappings")
    func inferablePair() throws {
        try assertCommand(Self.recipes, output: """
            'Recipes 1' -> 'Recipes 3': inferable
              copy entity Recipe
                rename instructions -> directions
                copy rating: made required (NULLs backfilled with '0'), default none -> '0'
                add cuisine
              copy entity Chef
              copy entity Ingredient
              add entity Cuisine
                add name
                add recipes
            """)
    }

    @Test("an inferable pair in JSON: every entity and property mapping with its kind and changes")
    func inferablePairJSON() throws {
        try assertCommand(Self.recipes + ["--format", "json"], output: """
            {"source":"Recipes 1","destination":"Recipes 3","inferable":true,"reasons":[],"refusals":[],"hasDataLoss":false,"entityMappings":[\
            {"kind":"copy","source":"Recipe","destination":"Recipe","hierarchyChange":null,"attributeMappings":[\
            {"kind":"copy","source":"name","destination":"name","changes":[]},\
            {"kind":"rename","source":"instructions","destination":"directions","changes":[]},\
            {"kind":"copy","source":"rating","destination":"rating","changes":["made required (NULLs backfilled with '0')","default none -> '0'"]}],\
            "relationshipMappings":[\
            {"kind":"copy","source":"chef","destination":"chef","changes":[]},\
            {"kind":"copy","source":"ingredients","destination":"ingredients","changes":[]},\
            {"kind":"add","source":null,"destination":"cuisine","changes":[]}]},\
            {"kind":"copy","source":"Chef","destination":"Chef","hierarchyChange":null,"attributeMappings":[\
            {"kind":"copy","source":"name","destination":"name","changes":[]},\
            {"kind":"copy","source":"training","destination":"training","changes":[]}],\
            "relationshipMappings":[{"kind":"copy","source":"recipes","destination":"recipes","changes":[]}]},\
            {"kind":"copy","source":"Ingredient","destination":"Ingredient","hierarchyChange":null,"attributeMappings":[\
            {"kind":"copy","source":"name","destination":"name","changes":[]},\
            {"kind":"copy","source":"amount","destination":"amount","changes":[]}],\
            "relationshipMappings":[{"kind":"copy","source":"recipe","destination":"recipe","changes":[]}]},\
            {"kind":"add","source":null,"destination":"Cuisine","hierarchyChange":null,\
            "attributeMappings":[{"kind":"add","source":null,"destination":"name","changes":[]}],\
            "relationshipMappings":[{"kind":"add","source":null,"destination":"recipes","changes":[]}]}]}
            """)
    }

    static let refusal = "entity Item, property price: added as non-optional without a default; existing rows would need a value invented (give it a default, make it optional, or write a mapping model)"

    static func writeShop(in folder: URL) throws {
        try write("name: Shop\nversions: [Shop 1, Shop 2]\n", to: "model.yaml", in: folder)
        try write("entities:\n  Item:\n    attributes:\n      name: string\n", to: "Shop 1.yaml", in: folder)
        try write("entities:\n  Item:\n    attributes:\n      name: string\n      price: {type: decimal, optional: false}\n", to: "Shop 2.yaml", in: folder)
    }

    @Test("a refused pair exits 1 and names the entity and property")
    func refusedPair() throws {
        try withTemporaryFolder { folder in
            try Self.writeShop(in: folder)
            try assertCommand(["infer", "--model", folder.path, "--from", "Shop 1", "--to", "Shop 2"], output: """
                'Shop 1' -> 'Shop 2': not inferable; a mapping model is needed
                  refused: \(Self.refusal)
                """, exitCode: 1)
        }
    }

    @Test("a refused pair in JSON gives each refusal's stable code beside its reason")
    func refusedPairJSON() throws {
        try withTemporaryFolder { folder in
            try Self.writeShop(in: folder)
            let message = Self.refusal.replacingOccurrences(of: "entity Item, property price: ", with: "")
            try assertCommand(["infer", "--model", folder.path, "--from", "Shop 1", "--to", "Shop 2", "--format", "json"], output: """
                {"source":"Shop 1","destination":"Shop 2","inferable":false,"reasons":["\(Self.refusal)"],\
                "refusals":[{"code":"nonOptionalWithoutDefault","entity":"Item","property":"price","message":"\(message)"}]}
                """, exitCode: 1)
        }
    }
}
