import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// `apply` killed (SIGKILL) between the passes of a heavyweight step leaves the store as it was;
/// the next `apply` continues after the last checkpoint and finishes the migration.
@Suite("kill and resume")
struct KillAndResumeTests {
    /// Change triggers per table, in any schema.
    static func changeTriggers(on connection: PostgresConnection) throws -> [String: Int] {
        let result = try connection.execute("""
            SELECT c.relname AS name, count(*) AS n FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
            WHERE t.tgname LIKE '\\_orchestrator\\_%' GROUP BY c.relname
            """)
        var triggers: [String: Int] = [:]
        for row in result.rows.indices { triggers[result.value(row, "name") ?? ""] = Int(result.int(row, "n") ?? 0) }
        return triggers
    }

    /// What both stores must agree on: recipe names, converted temperatures, costs and chefs.
    static let fingerprint = """
        SELECT count(*) AS n, sum(hashtext(r.name || '|' || round(r.t::numeric, 9) || '|' || r.cost || '|' || coalesce(r.chef, '-'))) AS h FROM (%@) AS r
        """

    @Test("apply killed between passes leaves the store as it was, and the next apply resumes", integration)
    func killedBetweenPassesThenResumed() throws {
        try withAppliedStore { folder, url, connection in
            try connection.execute("INSERT INTO kitchen.chef (name) SELECT 'chef ' || i FROM generate_series(1, 2000) AS i")
            try connection.execute("""
                INSERT INTO kitchen.recipe (name, temperature, amount, chef_pk)
                SELECT 'recipe ' || i, 300 + i % 100, i % 1000, CASE WHEN i % 9 = 0 THEN NULL ELSE 1 + i % 2000 END
                FROM generate_series(1, 200000) AS i
                """)
            let expected = try connection.execute(SQL(unsafeRaw: String(format: Self.fingerprint,
                "SELECT r.name, (r.temperature - 32.0) / 1.8 AS t, r.amount AS cost, c.name AS chef FROM kitchen.recipe r LEFT JOIN kitchen.chef c ON c._pk = r.chef_pk"))).rows

            // Streaming, so the recipes' stage 1 takes long enough to be killed in.
            let arguments = ["apply", "--model", folder.path, "--format", "json", "--streaming"]
            let first = try RunningOrchestrator(arguments, databaseURL: url)
            var checkpoints = 0
            let deadline = Date().addingTimeInterval(120)
            while first.isRunning && checkpoints < 2 && Date() < deadline {
                // Before the prepare pass commits, the table does not exist yet.
                checkpoints = (try? connection.execute("SELECT count(*) AS n FROM orchestrator.checkpoints WHERE store = 'kitchen' AND kind = 'heavyweight' AND pass > 0").int(0, "n")).flatMap { $0.map(Int.init) } ?? 0
                if checkpoints < 2 { Thread.sleep(forTimeInterval: 0.005) }
            }
            guard try first.killedWhileRunning() != nil else { return }

            // The store is as it was: same version, same rows; the passes done are kept.
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 1")
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe").int(0, "n") == 200_000)
            // Every table of the old store logs its writes until the swap.
            // The four change triggers of each old table, and the write log's of each staging table.
            #expect(try Self.changeTriggers(on: connection) == ["chef": 5, "recipe": 5])
            let done = try connection.execute("SELECT name FROM orchestrator.checkpoints WHERE store = 'kitchen' AND kind = 'heavyweight' AND pass > 0 ORDER BY pass").rows.map { $0[0] ?? "" }
            #expect(Array(done.prefix(2)) == ["prepare", "createInstances ChefToChef"], "\(done)")

            let plan = try OrchestratorBinary.run(["plan", "--model", folder.path, "--format", "json", "--streaming"], databaseURL: url)
            let planned = try #require(try jsonObject(plan.stdout)["steps"] as? [[String: Any]], "\(plan)")
            #expect(planned.first?["passesDone"] as? Int == done.count, "\(plan)")

            let second = try OrchestratorBinary.run(arguments, databaseURL: url)
            #expect(second.exitCode == 0, "\(second)")
            let events = try second.stdoutLines.dropLast().map(jsonObject)
            let resumed = events.filter { $0["event"] as? String == "passFinished" && $0["resumed"] as? Bool == true }.compactMap { $0["pass"] as? Int }
            #expect(resumed == Array(1...done.count), "\(second)")
            let ran = events.filter { $0["event"] as? String == "passStarted" }.compactMap { $0["pass"] as? Int }
            #expect(ran.allSatisfy { $0 > done.count } && !ran.isEmpty, "\(second)")
            let final = try jsonObject(try #require(second.stdoutLines.last))
            #expect(final["backupSchema"] as? String == "kitchen~", "\(second)")

            let migrated = try connection.execute(SQL(unsafeRaw: String(format: Self.fingerprint,
                "SELECT r.name, r.temperature_c AS t, r.total_cost AS cost, c.name AS chef FROM kitchen.recipe r LEFT JOIN kitchen.chef c ON c._pk = r.author_pk"))).rows
            #expect(migrated == expected)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'kitchen~staging'").int(0, "n") == 0)
            #expect(try connection.execute("SELECT outcome FROM orchestrator.migrations WHERE store = 'kitchen' ORDER BY id").rows.map { $0[0] ?? "" } == ["succeeded", "succeeded"])
            // No trigger or function is left, neither on the new store nor on the backup.
            #expect(try Self.changeTriggers(on: connection) == [:])
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_proc WHERE proname = '_record_change'").int(0, "n") == 0)
        }
    }

    /// A schema in the way of the staging schema that orchestrator did not make is refused,
    /// naming it, with the store untouched, even with --restart; once it is gone, --no-backup
    /// leaves no old store behind.
    @Test("a foreign staging schema is never dropped, even with --restart; --no-backup keeps no backup", integration)
    func foreignStagingThenRestartWithoutBackup() throws {
        try withAppliedStore { folder, url, connection in
            try connection.execute("INSERT INTO kitchen.recipe (name, temperature, amount) SELECT 'r' || i, i, i FROM generate_series(1, 50) AS i")
            try connection.execute("CREATE SCHEMA \"kitchen~staging\"")
            try connection.execute("CREATE TABLE \"kitchen~staging\".notes (text text)")

            for restart in [[], ["--restart"]] {
                let refused = try OrchestratorBinary.run(["apply", "--model", folder.path] + restart, databaseURL: url)
                #expect(refused.exitCode == 1, "\(refused)")
                #expect(refused.stderr.contains("schema \"kitchen~staging\" exists and was not made by orchestrator as the staging schema of store kitchen"), "\(refused)")
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 1")
                #expect(try connection.execute("SELECT count(*) AS n FROM \"kitchen~staging\".notes").int(0, "n") == 0)
            }
            try connection.execute("DROP SCHEMA \"kitchen~staging\" CASCADE")

            let applied = try OrchestratorBinary.run(["apply", "--model", folder.path, "--restart", "--no-backup"], databaseURL: url)
            #expect(applied.exitCode == 0, "\(applied)")
            #expect(applied.stdoutLines.last == "store kitchen: the old store was dropped (--no-backup)", "\(applied)")
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe WHERE abs(temperature_c - (total_cost - 32.0) / 1.8) < 1e-9").int(0, "n") == 50)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname LIKE 'kitchen~%'").int(0, "n") == 0)
        }
    }
}
