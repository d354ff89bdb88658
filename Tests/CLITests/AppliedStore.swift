import Foundation
import PostgresClient
import Testing
import TestSupport

/// The setup of the tests that kill, resume, crowd or refuse `apply`: writes the model with
/// `writeModel` into a temporary folder, creates the stores (`kitchen` by default) at `version`
/// by `apply --to` in a fresh database, and runs `body` with the folder, the database's URL and
/// a connection to it. Everything is removed afterwards.
func withAppliedStore(
    model writeModel: (URL) throws -> Void = KitchenModel.write, at version: String = "Kitchen 1", stores: [String] = ["kitchen"],
    _ body: (_ folder: URL, _ url: String, _ connection: PostgresConnection) throws -> Void
) throws {
    try withTemporaryFolder { folder in
        try writeModel(folder)
        try TestDatabase.withFreshDatabase { url in
            for store in stores {
                let create = try OrchestratorBinary.run(["apply", "--model", folder.path, "--to", version, "--store", store], databaseURL: url)
                try #require(create.exitCode == 0, "\(create)")
            }
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try body(folder, url, connection)
        }
    }
}

/// Kitchen 1 -> 2: chefs copied, recipes transformed (temperature converted, cost widened, the
/// chef relationship renamed `author`) by the mapping model `kitchen-1-to-2.yaml`.
enum KitchenModel {
    static let mapping = """
        source: Kitchen 1
        destination: Kitchen 2
        entityMappings:
          - name: ChefToChef
            type: copy
            source: Chef
            destination: Chef
          - name: RecipeToRecipe
            type: transform
            source: Recipe
            destination: Recipe
            attributes:
              temperatureC: "($source.temperature - 32.0) / 1.8"
              totalCost: "$source.amount"
            relationships:
              author: 'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToChef", $source.chef)'
        """

    /// Kitchen 2 -> 1, the reverse of `mapping` (a writable new version under apply --expand).
    static let reverseMapping = """
        source: Kitchen 2
        destination: Kitchen 1
        entityMappings:
          - name: ChefToChef
            type: copy
            source: Chef
            destination: Chef
          - name: RecipeToRecipe
            type: transform
            source: Recipe
            destination: Recipe
            attributes:
              temperature: "$source.temperatureC * 1.8 + 32.0"
              amount: "$source.totalCost"
            relationships:
              chef: 'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToChef", $source.author)'
        """

    static func write(in folder: URL) throws {
        try CLITests.write("name: Kitchen\nversions: [Kitchen 1, Kitchen 2]\n", to: "model.yaml", in: folder)
        try CLITests.write("""
            entities:
              Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true}}}
              Recipe: {attributes: {name: string, temperature: double, amount: int32}, relationships: {chef: {destination: Chef, inverse: recipes}}}
            """, to: "Kitchen 1.yaml", in: folder)
        try CLITests.write("""
            entities:
              Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: author, toMany: true}}}
              Recipe: {attributes: {name: string, temperatureC: double, totalCost: int64}, relationships: {author: {destination: Chef, inverse: recipes}}}
            """, to: "Kitchen 2.yaml", in: folder)
        try CLITests.write(mapping, to: "kitchen-1-to-2.yaml", in: folder)
    }
}
