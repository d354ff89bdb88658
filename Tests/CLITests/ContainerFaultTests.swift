import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 22: the server itself fails in the middle of a heavyweight `apply`, each test on a
/// fresh server in its own container. Killed: the store comes back intact with the server, and
/// the next apply resumes and finishes. Paused (it accepts connections and answers nothing):
/// apply gives up in bounded time, saying the server stopped answering, and nothing is lost.
@Suite("Servers failing mid-apply", .serialized, containers)
struct ContainerFaultTests {
    /// Kitchen 1 with rows, and `apply --streaming` to Kitchen 2 running until its second pass
    /// has committed; then `body` with the running apply.
    static func withApplyMidway(
        rows: Int = 200_000, environment: [String: String] = [:],
        _ body: (_ server: PostgresContainer, _ folder: URL, _ apply: RunningOrchestrator, _ arguments: [String]) throws -> Void
    ) throws {
        try Topology.withServer { server in
            try withTemporaryFolder { folder in
                try KitchenModel.write(in: folder)
                let url = server.url()
                let create = try OrchestratorBinary.run(["apply", "--model", folder.path, "--to", "Kitchen 1"], databaseURL: url)
                try #require(create.exitCode == 0, "\(create)")
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                try connection.execute("INSERT INTO kitchen.chef (name) SELECT 'chef ' || i FROM generate_series(1, 2000) AS i")
                try connection.execute(SQL(unsafeRaw: """
                    INSERT INTO kitchen.recipe (name, temperature, amount, chef_pk)
                    SELECT 'recipe ' || i, 300 + i % 100, i % 1000, CASE WHEN i % 9 = 0 THEN NULL ELSE 1 + i % 2000 END
                    FROM generate_series(1, \(rows)) AS i
                    """))
                let arguments = ["apply", "--model", folder.path, "--format", "json", "--streaming"]
                let apply = try RunningOrchestrator(arguments, databaseURL: url, environment: environment)
                var checkpoints = 0
                let deadline = Date().addingTimeInterval(180)
                while apply.isRunning && checkpoints < 2 && Date() < deadline {
                    checkpoints = (try? connection.execute("SELECT count(*) AS n FROM orchestrator.checkpoints WHERE store = 'kitchen' AND kind = 'heavyweight' AND pass > 0").int(0, "n")).flatMap { $0.map(Int.init) } ?? 0
                    if checkpoints < 2 { Thread.sleep(forTimeInterval: 0.005) }
                }
                guard apply.isRunning, checkpoints >= 2 else {
                    apply.kill()
                    Issue.record("apply was not midway (\(checkpoints) checkpoints): \(try apply.finish())")
                    return
                }
                try body(server, folder, apply, arguments)
            }
        }
    }

    /// The store at Kitchen 1 with every row, and the second apply finishing it.
    static func expectIntactThenFinished(server: PostgresContainer, arguments: [String], rows: Int) throws {
        let connection = try PostgresConnection(url: server.url())
        defer { connection.close() }
        #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 1")
        #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe").int(0, "n") == Int64(rows))
        #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.chef").int(0, "n") == 2000)

        let second = try RunningOrchestrator(arguments, databaseURL: server.url()).finish(killingAfter: 300)
        #expect(second.exitCode == 0, "\(second)")
        #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 2")
        #expect(try connection.execute("""
            SELECT count(*) AS n FROM kitchen.recipe
            WHERE abs(temperature_c - (300 + substring(name from 8)::int % 100 - 32.0) / 1.8) > 1e-9 OR total_cost <> substring(name from 8)::int % 1000
            """).int(0, "n") == 0)
        #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe").int(0, "n") == Int64(rows))
        #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe WHERE author_pk IS NOT NULL").int(0, "n") == Int64(rows - rows / 9))
        #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'kitchen~staging'").int(0, "n") == 0)
    }

    @Test("a server killed mid-apply comes back with the store intact, and the next apply finishes")
    func serverKilledMidApply() throws {
        try Self.withApplyMidway { server, _, apply, arguments in
            try server.kill()
            let started = Date()
            let first = try apply.finish(killingAfter: 120)
            #expect(first.exitCode != 0, "\(first)")
            #expect(Date().timeIntervalSince(started) < 100, "apply took \(Date().timeIntervalSince(started)) s to notice")
            #expect(first.stderr.contains("error: "), "\(first)")

            try server.start()
            try Self.expectIntactThenFinished(server: server, arguments: arguments, rows: 200_000)
        }
    }

    /// The kernel of a paused container still completes handshakes and acknowledges data, so
    /// keepalives never fire; the liveness probes (LivenessWatch) end the wait.
    @Test("a server paused mid-apply: apply gives up in bounded time saying the server stopped answering, and nothing is lost")
    func serverPausedMidApply() throws {
        try Self.withApplyMidway { server, _, apply, arguments in
            try server.pause()
            let started = Date()
            let first = try apply.finish(killingAfter: 150)
            let waited = Date().timeIntervalSince(started)
            try server.unpause()
            #expect(first.exitCode == 1, "\(first)")
            #expect(waited < 90, "apply gave up after \(waited) s")
            #expect(first.stderr.contains("the server stopped answering: no reply to the statement after "), "\(first)")
            #expect(first.stderr.contains("got no answer within 10 s (connect_timeout)"), "\(first)")
            #expect(!first.stderr.contains(server.password), "\(first)")

            try server.waitUntilReady()
            try Self.expectIntactThenFinished(server: server, arguments: arguments, rows: 200_000)
        }
    }
}
