import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// `apply --jobs`: a heavyweight step's set-based stage 1 passes (chefs and recipes of the
/// kitchen, different tables) run at once on several sessions, each committing with its own
/// checkpoint; the store is the one a run of one session at a time makes, and a run killed
/// while they run resumes and finishes.
@Suite("apply --jobs")
struct ConcurrentPassesTests {
    /// Every row of a kitchen store with its key and its chef's, its constraints and indexes.
    static func contents(of store: String, on connection: PostgresConnection) throws -> [[String?]] {
        try connection.execute("""
            SELECT r._pk::text, r.name, r.temperature_c::text, r.total_cost::text, c._pk::text, c.name FROM \(ident: store, "recipe") r
            LEFT JOIN \(ident: store, "chef") c ON c._pk = r.author_pk
            UNION ALL SELECT 'chef', _pk::text, name, NULL, NULL, NULL FROM \(ident: store, "chef")
            UNION ALL SELECT 'constraint', conrelid::regclass::text, conname, pg_get_constraintdef(oid), NULL, NULL
                FROM pg_constraint WHERE connamespace = \(store)::regnamespace
            UNION ALL SELECT 'index', tablename, indexname, NULL, NULL, NULL FROM pg_indexes WHERE schemaname = \(store)
            ORDER BY 1, 2, 3
            """).rows.map { row in row.map { $0?.replacingOccurrences(of: "kitchen_b.", with: "kitchen.") } }
    }

    static func fill(_ store: String, recipes: Int, on connection: PostgresConnection) throws {
        try connection.execute("INSERT INTO \(ident: store, "chef") (name) SELECT 'chef ' || i FROM generate_series(1, 2000) AS i")
        try connection.execute("""
            INSERT INTO \(ident: store, "recipe") (name, temperature, amount, chef_pk)
            SELECT 'recipe ' || i, 300 + i % 100, i % 1000, CASE WHEN i % 9 = 0 THEN NULL ELSE 1 + i % 2000 END
            FROM generate_series(1, \(literal: recipes)) AS i
            """)
    }

    @Test("a heavyweight step applied with --jobs 1 and with --jobs 4 gives the same store, row for row", integration)
    func oneSessionAndFourGiveTheSameStore() throws {
        try withAppliedStore(stores: ["kitchen", "kitchen_b"]) { folder, url, connection in
            for store in ["kitchen", "kitchen_b"] { try Self.fill(store, recipes: 20_000, on: connection) }
            for (store, jobs) in [("kitchen", "1"), ("kitchen_b", "4")] {
                let applied = try OrchestratorBinary.run(["apply", "--model", folder.path, "--store", store, "--jobs", jobs, "--format", "json"], databaseURL: url)
                #expect(applied.exitCode == 0, "\(applied)")
                let final = try jsonObject(try #require(applied.stdoutLines.last))
                #expect(final["backupSchema"] as? String == "\(store)~", "\(applied)")
            }
            let one = try Self.contents(of: "kitchen", on: connection)
            #expect(one.count > 20_000 + 2000, "\(one.suffix(10))")
            #expect(one.contains(["constraint", "kitchen.recipe", "recipe_pkey", "PRIMARY KEY (_pk)", nil, nil]))
            #expect(try Self.contents(of: "kitchen_b", on: connection) == one)
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe WHERE author_pk IS NULL").int(0, "n") == 20_000 / 9)
        }
    }

    @Test("--jobs must be at least 1", integration)
    func jobsBelowOneIsAUsageError() throws {
        try withAppliedStore { folder, url, connection in
            let refused = try OrchestratorBinary.run(["apply", "--model", folder.path, "--jobs", "0"], databaseURL: url)
            #expect(refused.exitCode == 64, "\(refused)")
            #expect(refused.stderr.contains("--jobs must be at least 1"), "\(refused)")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 1")
        }
    }

    @Test("apply --jobs killed while its stage 1 passes run at once leaves the store as it was, and the next apply finishes", integration)
    func killedWhilePassesRunAtOnceThenResumed() throws {
        try withAppliedStore { folder, url, connection in
            try Self.fill("kitchen", recipes: 300_000, on: connection)
            let expected = try connection.execute(SQL(unsafeRaw: String(format: KillAndResumeTests.fingerprint,
                "SELECT r.name, (r.temperature - 32.0) / 1.8 AS t, r.amount AS cost, c.name AS chef FROM kitchen.recipe r LEFT JOIN kitchen.chef c ON c._pk = r.chef_pk"))).rows

            let arguments = ["apply", "--model", folder.path, "--format", "json", "--jobs", "4"]
            let first = try RunningOrchestrator(arguments, databaseURL: url)
            // Killed once the recipes' INSERT runs on a session of its own.
            let deadline = Date().addingTimeInterval(120)
            var copying = false
            while first.isRunning && !copying && Date() < deadline {
                copying = (try? connection.execute("""
                    SELECT count(*) AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'INSERT INTO "kitchen~staging"."recipe"%'
                    """).int(0, "n")).flatMap { $0 }.map { $0 > 0 } ?? false
                if !copying { Thread.sleep(forTimeInterval: 0.005) }
            }
            guard try first.killedWhileRunning() != nil else { return }
            // The server ends a killed client's session once its statement is over: the
            // rolled-back INSERT must not hold its lock against the next run's primary key.
            while try connection.execute("""
                SELECT count(*) AS n FROM pg_stat_activity WHERE query LIKE 'INSERT INTO "kitchen~staging"%' AND pid <> pg_backend_pid()
                """).int(0, "n") != 0 && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
            }

            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 1")
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe").int(0, "n") == 300_000)
            let done = try connection.execute("SELECT pass FROM orchestrator.checkpoints WHERE store = 'kitchen' AND kind = 'heavyweight' AND pass > 0 ORDER BY pass").rows.compactMap { $0[0].flatMap(Int.init) }
            #expect(done.first == 1 && !done.contains(4), "\(done)")

            let second = try OrchestratorBinary.run(arguments, databaseURL: url)
            #expect(second.exitCode == 0, "\(second)")
            let events = try second.stdoutLines.dropLast().map(jsonObject)
            let resumed = events.filter { $0["event"] as? String == "passFinished" && $0["resumed"] as? Bool == true }.compactMap { $0["pass"] as? Int }
            #expect(resumed == done, "\(second)")
            let ran = events.filter { $0["event"] as? String == "passStarted" }.compactMap { $0["pass"] as? Int }
            #expect(Set(ran).isDisjoint(with: done) && ran.contains(4), "\(second)")

            let migrated = try connection.execute(SQL(unsafeRaw: String(format: KillAndResumeTests.fingerprint,
                "SELECT r.name, r.temperature_c AS t, r.total_cost AS cost, c.name AS chef FROM kitchen.recipe r LEFT JOIN kitchen.chef c ON c._pk = r.author_pk"))).rows
            #expect(migrated == expected)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'kitchen~staging'").int(0, "n") == 0)
            #expect(try connection.execute("SELECT outcome FROM orchestrator.migrations WHERE store = 'kitchen' ORDER BY id").rows.map { $0[0] ?? "" } == ["succeeded", "succeeded"])
        }
    }
}
