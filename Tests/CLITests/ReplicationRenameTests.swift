import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 24: a heavyweight step whose mapping model renames an entity (Chef -> Cook) replaces
/// table `chef` with table `cook`: a `FOR TABLE kitchen.chef` publication names `kitchen.cook`
/// after the swap, offline and `--online`, and what the publisher writes into it reaches the
/// subscriber migrated with it.
@Suite("A FOR TABLE publication across a heavyweight step renaming a table", .serialized, containers)
struct ReplicationRenameTests {
    /// Kitchen 2 with Chef renamed Cook (recipes keep their attributes, their link renamed).
    static func renameChef(in folder: URL) throws {
        try CLITests.write("""
            entities:
              Cook: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: cook, toMany: true}}}
              Recipe: {attributes: {name: string, temperature: double, amount: int32}, relationships: {cook: {destination: Cook, inverse: recipes}}}
            """, to: "Kitchen 2.yaml", in: folder)
        try CLITests.write("""
            source: Kitchen 1
            destination: Kitchen 2
            entityMappings:
              - name: ChefToCook
                type: transform
                source: Chef
                destination: Cook
              - name: RecipeToRecipe
                type: transform
                source: Recipe
                destination: Recipe
                relationships:
                  cook: 'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToCook", $source.chef)'
            """, to: "kitchen-1-to-2.yaml", in: folder)
    }

    @Test("apply --subscriber of a step renaming chef to cook: the FOR TABLE publication names kitchen.cook, rows written during and after arrive",
          arguments: [[], ["--online"]])
    func renamedTableJoinsThePublication(mode: [String]) throws {
        try ReplicationTests.withReplicatedKitchen(.tableList) { publisher, subscriber, folder, publishing, subscribing in
            try Self.renameChef(in: folder)
            let plan = try OrchestratorBinary.run(["plan", "--model", folder.path] + mode, databaseURL: publisher.url())
            #expect(plan.stdoutLines.contains {
                $0.hasPrefix("-- hazard replicationMembershipCarried: publication kitchen publishes kitchen.chef (replaced by kitchen.cook): ")
            }, "\(plan)")
            #expect(!plan.stdout.contains("replicationMembershipLost"), "\(plan)")

            // Recipes keep the columns this insert names: it fits either shape.
            let writer = TwinWriter.repeating(url: publisher.url(), "INSERT INTO kitchen.recipe (name) VALUES ('written during')")
            let apply = try OrchestratorBinary.run(["apply", "--model", folder.path, "--subscriber", subscriber.url()] + mode, databaseURL: publisher.url())
            let written = try writer.stopCounting()
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(written > 0)
            let published = try publishing.execute("""
                SELECT (SELECT string_agg(schemaname || '.' || tablename, ',' ORDER BY tablename) FROM pg_publication_tables WHERE pubname = 'kitchen') AS tables,
                       (SELECT relreplident::text FROM pg_class WHERE oid = 'kitchen.cook'::regclass) AS identity
                """)
            #expect(published.value(0, "tables") == "kitchen.cook,kitchen.recipe", "\(published.rows)")
            #expect(published.value(0, "identity") == "f")
            let records = try subscribing.execute("SELECT string_agg(srrelid::regclass::text || ' ' || srsubstate::text, ',' ORDER BY srrelid::regclass::text) AS r FROM pg_subscription_rel")
            #expect(records.value(0, "r") == "kitchen.cook r,kitchen.recipe r")

            try publishing.execute("INSERT INTO kitchen.cook (name) SELECT 'cook after ' || i FROM generate_series(1, 20) AS i")
            try publishing.execute("UPDATE kitchen.cook SET name = name || ' (renamed)' WHERE _pk <= 5")
            try publishing.execute("INSERT INTO kitchen.recipe (name, cook_pk) SELECT 'after ' || i, 1 FROM generate_series(1, 10) AS i")
            try publishing.execute("DELETE FROM kitchen.recipe WHERE _pk <= 3")
            #expect(try ReplicationTests.converge(publisher, subscriber, tables: ["cook", "recipe"]), "rows written at the publisher never reached the subscriber")
            let counts = try subscribing.execute("""
                SELECT (SELECT count(*) FROM kitchen.cook WHERE name LIKE 'cook after %') AS cooks,
                       (SELECT count(*) FROM kitchen.cook WHERE name LIKE '% (renamed)') AS renamed,
                       (SELECT count(*) FROM kitchen.recipe WHERE name = 'written during') AS during,
                       (SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen') AS version
                """)
            #expect(counts.int(0, "cooks") == 20)
            #expect(counts.int(0, "renamed") == 5)
            #expect(counts.int(0, "during") == Int64(written))
            #expect(counts.value(0, "version") == "Kitchen 2")
        }
    }
}
