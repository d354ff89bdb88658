import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 21: offline, the recipes' copy runs in `--jobs` parts, each committing on its own
/// before the pass's transaction builds the primary key and records the checkpoint. A kill -9
/// between the parts' commits and that checkpoint leaves committed rows in the staging table;
/// the next `apply` empties it and finishes, no row doubled.
@Suite("apply --jobs: the copy in parts, killed before its checkpoint")
struct SplitCopyKillTests {
    @Test("plan names the passes whose copy runs in parts: text and JSON", integration)
    func planNamesThePassesRunInParts() throws {
        try withAppliedStore { folder, url, _ in
            let json = try OrchestratorBinary.run(["plan", "--model", folder.path, "--format", "json"], databaseURL: url)
            let steps = try #require(try jsonObject(json.stdout)["steps"] as? [[String: Any]], "\(json)")
            let passes = try #require(steps.first?["passes"] as? [[String: Any]], "\(json)")
            #expect(passes.map { $0["inParts"] as? Bool } == [false, true, true, false], "\(json)")
            let text = try OrchestratorBinary.run(["plan", "--model", folder.path], databaseURL: url)
            let headers = text.stdoutLines.filter { $0.hasPrefix("-- pass ") }
            #expect(headers.filter { $0.hasSuffix(", in parts at once offline (--jobs), from 50000 rows") }.count == 2, "\(text)")
            #expect(headers.first { $0.contains("RecipeToRecipe") }?.hasSuffix("from 50000 rows") == true, "\(text)")
        }
    }

    @Test("killed after the recipes' parts committed and before the pass's checkpoint: the next apply finishes, the rows those of one copy", integration)
    func killedBetweenThePartsAndTheCheckpoint() throws {
        try withAppliedStore { folder, url, connection in
            try ConcurrentPassesTests.fill("kitchen", recipes: 200_000, on: connection)
            try connection.execute("ANALYZE kitchen.recipe")
            let expected = try connection.execute(SQL(unsafeRaw: String(format: KillAndResumeTests.fingerprint,
                "SELECT r.name, (r.temperature - 32.0) / 1.8 AS t, r.amount AS cost, c.name AS chef FROM kitchen.recipe r LEFT JOIN kitchen.chef c ON c._pk = r.chef_pk"))).rows

            let arguments = ["apply", "--model", folder.path, "--format", "json", "--jobs", "2"]
            let first = try RunningOrchestrator(arguments, databaseURL: url)
            // A reader of the staging table, taken while the parts copy (it does not stop them),
            // keeps the pass's primary key build waiting after they committed.
            let reader = try PostgresConnection(url: url)
            defer { reader.close() }
            let deadline = Date().addingTimeInterval(120)
            var held = false
            while first.isRunning && !held && Date() < deadline {
                let copying: Bool = (try? connection.execute("""
                    SELECT count(*) AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'INSERT INTO "kitchen~staging"."recipe"%s.ctid %'
                    """).int(0, "n")).flatMap { $0 }.map { $0 > 0 } ?? false
                if copying {
                    try reader.execute("BEGIN")
                    try reader.execute(#"LOCK TABLE "kitchen~staging"."recipe" IN ACCESS SHARE MODE"#)
                    held = true
                } else {
                    Thread.sleep(forTimeInterval: 0.002)
                }
            }
            try #require(held, "the recipes' copy never ran in parts")
            // Both parts committed: the key's build waits for the reader.
            var waiting = false
            while first.isRunning && !waiting && Date() < deadline {
                waiting = try connection.execute("""
                    SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'ALTER TABLE "kitchen~staging"."recipe" ADD PRIMARY KEY%'
                    """).int(0, "n") == 1
                if !waiting { Thread.sleep(forTimeInterval: 0.01) }
            }
            try #require(waiting, "the primary key's build never waited")
            let left = try connection.execute(#"SELECT count(*) AS n FROM "kitchen~staging".recipe"#).int(0, "n")
            #expect(left == 200_000)
            _ = try #require(try first.killedWhileRunning())
            try reader.execute("ROLLBACK")

            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 1")
            let done = try connection.execute("SELECT pass FROM orchestrator.checkpoints WHERE store = 'kitchen' AND kind = 'heavyweight' ORDER BY pass").rows.compactMap { $0[0].flatMap(Int.init) }
            #expect(!done.contains(3), "\(done)")

            // Resumed, the pass runs whole (a group of one whose staging schema's write log is
            // looked at under the guard) and empties the table first; `SplitInsertTests` resumes
            // one in parts.
            let second = try OrchestratorBinary.run(arguments, databaseURL: url)
            #expect(second.exitCode == 0, "\(second)")
            let migrated = try connection.execute(SQL(unsafeRaw: String(format: KillAndResumeTests.fingerprint,
                "SELECT r.name, r.temperature_c AS t, r.total_cost AS cost, c.name AS chef FROM kitchen.recipe r LEFT JOIN kitchen.chef c ON c._pk = r.author_pk"))).rows
            #expect(migrated == expected)
            #expect(try connection.execute("SELECT count(*) AS n, count(DISTINCT _pk) AS k FROM kitchen.recipe").rows == [["200000", "200000"]])
        }
    }
}
