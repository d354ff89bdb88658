import Foundation
import PostgresClient
import Testing
import TestSupport

/// `restore` compares the backup with the contract of the version it restores, by the drift
/// rules of `adopt`, and refuses one that lacks or changed anything of it.
@Suite("restore checks the backup")
struct RestoreBackupCheckTests {
    /// Kitchen 1 with two chefs and three recipes, migrated to Kitchen 2 (the backup `kitchen~`
    /// holds Kitchen 1); `body` gets the rows of the backup's recipes before anything broke it.
    static func withMigratedKitchen(_ body: (_ folder: URL, _ url: String, _ connection: PostgresConnection, _ recipes: [[String?]]) throws -> Void) throws {
        try withAppliedStore { folder, url, connection in
            try connection.execute("INSERT INTO kitchen.chef (name) VALUES ('Ada'), ('Bo')")
            try connection.execute("INSERT INTO kitchen.recipe (name, temperature, amount, chef_pk) SELECT 'recipe ' || i, 212, i, 1 + i % 2 FROM generate_series(1, 3) AS i")
            let recipes = try RestoreAndHistoryTests.rows("kitchen.recipe", "_pk, name, temperature, amount, chef_pk", on: connection)
            let apply = try OrchestratorBinary.run(["apply", "--model", folder.path], databaseURL: url)
            try #require(apply.exitCode == 0, "\(apply)")
            try body(folder, url, connection, recipes)
        }
    }

    /// The schemas, the metadata, the history and the migrated store's rows: what a refused
    /// restore must leave as it was.
    static func fingerprint(_ connection: PostgresConnection) throws -> [[String?]] {
        try connection.execute("""
            SELECT (SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace WHERE nspname LIKE 'kitchen%'),
                   (SELECT version_name FROM orchestrator.stores), (SELECT count(*) FROM orchestrator.migrations),
                   (SELECT string_agg(schema || ' ' || role, ',') FROM orchestrator.store_schemas),
                   (SELECT string_agg(_pk || ' ' || name || ' ' || temperature_c || ' ' || total_cost, ',' ORDER BY _pk) FROM kitchen.recipe)
            """).rows
    }

    static func restoreMustBeRefused(_ folder: URL, _ url: String, _ connection: PostgresConnection, saying lines: [String]) throws {
        let before = try fingerprint(connection)
        let restore = try OrchestratorBinary.run(["restore", "--model", folder.path], databaseURL: url)
        #expect(restore.exitCode == 1 && restore.stdout.isEmpty, "\(restore)")
        let expected = lines.count == 1 ? "error: \(lines[0])\n" : "error: \(lines.count) problems\n" + lines.map { "  \($0)\n" }.joined()
        #expect(restore.stderr == expected, "\(restore)")
        #expect(try fingerprint(connection) == before)
        #expect(try connection.execute("SELECT version_name FROM orchestrator.stores").rows == [["Kitchen 2"]])
    }

    @Test("a backup that lost a table is refused, each difference listed, nothing changed", integration)
    func backupMissingATable() throws {
        try Self.withMigratedKitchen { folder, url, connection, _ in
            try connection.execute("DROP TABLE \"kitchen~\".chef CASCADE")
            try Self.restoreMustBeRefused(folder, url, connection, saying: [
                "the backup \"kitchen~\" of store kitchen differs from the contract of 'Kitchen 1': missing table chef",
                "the backup \"kitchen~\" of store kitchen differs from the contract of 'Kitchen 1': missing foreign key recipe_chef_pk_fkey on recipe (expected: (chef_pk) references chef (_pk) on delete set null on update no action); restoring it would break the store; nothing was changed",
            ])
        }
    }

    @Test("a backup that lost a column is refused, nothing changed", integration)
    func backupMissingAColumn() throws {
        try Self.withMigratedKitchen { folder, url, connection, _ in
            try connection.execute("ALTER TABLE \"kitchen~\".recipe DROP COLUMN amount")
            try Self.restoreMustBeRefused(folder, url, connection, saying: [
                "the backup \"kitchen~\" of store kitchen differs from the contract of 'Kitchen 1': missing column recipe.amount (expected: integer); restoring it would break the store; nothing was changed",
            ])
        }
    }

    @Test("a user's schema in the place of a dropped backup is refused, nothing changed", integration)
    func backupReplacedByAUserSchema() throws {
        try Self.withMigratedKitchen { folder, url, connection, _ in
            try connection.execute("DROP SCHEMA \"kitchen~\" CASCADE")
            try connection.execute("CREATE SCHEMA \"kitchen~\"")
            try connection.execute("CREATE TABLE \"kitchen~\".notes (id bigint PRIMARY KEY, body text)")
            try connection.execute("INSERT INTO \"kitchen~\".notes VALUES (1, 'mine')")
            try Self.restoreMustBeRefused(folder, url, connection, saying: [
                "the backup \"kitchen~\" of store kitchen differs from the contract of 'Kitchen 1': missing table chef",
                "the backup \"kitchen~\" of store kitchen differs from the contract of 'Kitchen 1': missing table recipe; restoring it would break the store; nothing was changed",
            ])
            #expect(try connection.execute("SELECT id, body FROM \"kitchen~\".notes").rows == [["1", "mine"]])
        }
    }

    @Test("an intact backup with an object of the team's own is restored with every row", integration)
    func intactBackupIsRestored() throws {
        try Self.withMigratedKitchen { folder, url, connection, recipes in
            try connection.execute("CREATE INDEX dba_idx ON \"kitchen~\".recipe (name)")
            let restore = try OrchestratorBinary.run(["restore", "--model", folder.path], databaseURL: url)
            #expect(restore.exitCode == 0 && restore.stderr.isEmpty, "\(restore)")
            #expect(try RestoreAndHistoryTests.rows("kitchen.recipe", "_pk, name, temperature, amount, chef_pk", on: connection) == recipes)
            #expect(try connection.execute("SELECT _pk, name FROM kitchen.chef ORDER BY _pk").rows == [["1", "Ada"], ["2", "Bo"]])
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores").rows == [["Kitchen 1"]])
        }
    }
}
