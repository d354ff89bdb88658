import Foundation
import PostgresClient
import Testing
import TestSupport

/// A heavyweight step builds the new store from the contract; with `--no-backup` the old one,
/// and the team's own tables and columns in it, are dropped: those holding rows take
/// `--allow-data-loss`, as the rows a mapping model leaves behind do.
@Suite("--no-backup takes consent for the team's own objects")
struct NoBackupConsentTests {
    /// Kitchen 1 with two chefs and three recipes, and the team's own: a table `shelf` with two
    /// rows, a column `recipe.note` set on one recipe.
    static func withTeamObjects(_ body: (_ folder: URL, _ url: String, _ connection: PostgresConnection) throws -> Void) throws {
        try withAppliedStore { folder, url, connection in
            try connection.execute("INSERT INTO kitchen.chef (name) VALUES ('Ada'), ('Bo')")
            try connection.execute("INSERT INTO kitchen.recipe (name, temperature, amount, chef_pk) SELECT 'recipe ' || i, 212, i, 1 FROM generate_series(1, 3) AS i")
            try connection.execute("CREATE TABLE kitchen.shelf (id bigint PRIMARY KEY, label text)")
            try connection.execute("INSERT INTO kitchen.shelf VALUES (1, 'top'), (2, 'bottom')")
            try connection.execute("ALTER TABLE kitchen.recipe ADD COLUMN note text")
            try connection.execute("UPDATE kitchen.recipe SET note = 'family recipe' WHERE _pk = 2")
            try body(folder, url, connection)
        }
    }

    static let shelfLoss = "table shelf of store kitchen is not in the contract (extra drift, the team's own): its rows are dropped with the old store, which is not kept (no backup)"
    static let noteLoss = "column recipe.note of store kitchen is not in the contract (extra drift, the team's own): its values are dropped with the old store, which is not kept (no backup)"

    static func teamRows(_ connection: PostgresConnection) throws -> [[String?]] {
        try connection.execute("""
            SELECT (SELECT string_agg(id || ' ' || label, ',' ORDER BY id) FROM kitchen.shelf),
                   (SELECT string_agg(_pk || ' ' || note, ',') FROM kitchen.recipe WHERE note IS NOT NULL),
                   (SELECT version_name FROM orchestrator.stores),
                   (SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'kitchen~%')
            """).rows
    }

    @Test("apply --no-backup with an extra table and an extra column holding rows is refused naming both, with nothing changed; --allow-data-loss proceeds", integration)
    func refusedWithoutConsent() throws {
        try Self.withTeamObjects { folder, url, connection in
            let before = try Self.teamRows(connection)
            #expect(before == [["1 top,2 bottom", "2 family recipe", "Kitchen 1", "0"]])

            let apply = try OrchestratorBinary.run(["apply", "--model", folder.path, "--no-backup"], databaseURL: url)
            #expect(apply.exitCode == 1 && apply.stdout.isEmpty, "\(apply)")
            #expect(apply.stderr == "error: the migration loses data: step 1 of 1 ('Kitchen 1' -> 'Kitchen 2') \(Self.noteLoss), \(Self.shelfLoss); nothing was changed (run again with --allow-data-loss to accept the loss)\n", "\(apply)")
            #expect(try Self.teamRows(connection) == before)

            let plan = try OrchestratorBinary.run(["plan", "--model", folder.path, "--no-backup", "--format", "json"], databaseURL: url)
            #expect(plan.exitCode == 0, "\(plan)")
            let json = try jsonObject(plan.stdout)
            #expect(json["needsAllowDataLoss"] as? Bool == true, "\(plan)")
            let steps = try #require(json["steps"] as? [[String: Any]], "\(plan)")
            let losses = (steps[0]["hazards"] as? [[String: Any]] ?? []).filter { $0["code"] as? String == "dataLoss" }.compactMap { $0["message"] as? String }
            #expect(losses == [Self.noteLoss, Self.shelfLoss], "\(plan)")

            // With a backup the old store, and the team's objects in it, are kept: no consent asked.
            let kept = try OrchestratorBinary.run(["plan", "--model", folder.path], databaseURL: url)
            #expect(kept.exitCode == 0 && !kept.stdout.contains("dataLoss"), "\(kept)")

            let allowed = try OrchestratorBinary.run(["apply", "--model", folder.path, "--no-backup", "--allow-data-loss"], databaseURL: url)
            #expect(allowed.exitCode == 0, "\(allowed)")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores").rows == [["Kitchen 2"]])
            #expect(try connection.execute("SELECT _pk, name, total_cost FROM kitchen.recipe ORDER BY _pk").rows == [["1", "recipe 1", "1"], ["2", "recipe 2", "2"], ["3", "recipe 3", "3"]])
            #expect(try connection.execute("SELECT to_regclass('kitchen.shelf') IS NULL AS gone").bool(0, "gone") == true)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname LIKE 'kitchen~%'").int(0, "n") == 0)
        }
    }

    @Test("empty extra tables and columns of NULLs lose nothing: apply --no-backup runs, and the plan names them", integration)
    func emptyExtrasNeedNoConsent() throws {
        try Self.withTeamObjects { folder, url, connection in
            try connection.execute("DELETE FROM kitchen.shelf")
            try connection.execute("UPDATE kitchen.recipe SET note = NULL")
            let plan = try OrchestratorBinary.run(["plan", "--model", folder.path, "--no-backup"], databaseURL: url)
            #expect(plan.exitCode == 0, "\(plan)")
            #expect(plan.stdoutLines.contains { $0.hasPrefix("-- hazard tableRewrite: ") && $0.hasSuffix("; the old store is dropped once the new one is in place; the empty extra column recipe.note, table shelf go with it") }, "\(plan)")
            #expect(!plan.stdout.contains("dataLoss"), "\(plan)")
            let apply = try OrchestratorBinary.run(["apply", "--model", folder.path, "--no-backup"], databaseURL: url)
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe").int(0, "n") == 3)
        }
    }
}
