import Foundation
import PostgresClient
import Testing
import TestSupport

/// Issue 20.2: a lock another session holds on orchestrator's own tables (VACUUM FULL,
/// pg_repack, an ALTER) makes no command hang: each waits `--lock-wait`, names the holder
/// while it waits and in its error, and exits 1 with nothing changed.
@Suite("Locked metadata")
struct MetadataLockTests {
    /// Holds `LOCK TABLE orchestrator.<table> IN ACCESS EXCLUSIVE MODE` in an open transaction
    /// while `body` runs, as session `holder-under-test`; `body` gets its pid.
    static func holdingLock(on table: String, url: String, _ body: (Int) throws -> Void) throws {
        let holder = try PostgresConnection(url: url)
        defer { holder.close() }
        try holder.execute("SET application_name = 'holder-under-test'")
        let pid = try #require(holder.execute("SELECT pg_backend_pid() AS pid").int(0, "pid"))
        try holder.execute("BEGIN")
        try holder.execute("LOCK TABLE orchestrator.\(unsafeRaw: table) IN ACCESS EXCLUSIVE MODE")
        defer { _ = try? holder.execute("ROLLBACK") }
        try body(Int(pid))
    }

    /// Runs `arguments` with `--lock-wait 2` and checks: exit 1 after 2 to 15 s, a note naming
    /// the holder while it waited, an error naming it (and `errorPrefix`).
    static func expectBounded(_ arguments: [String], pid: Int, table: String, errorPrefix: String = "error: ", url: String) throws {
        let started = Date()
        let result = try RunningOrchestrator(arguments + ["--model", "migrations", "--lock-wait", "2"], databaseURL: url).finish(killingAfter: 60)
        let elapsed = Date().timeIntervalSince(started)
        let named = "orchestrator.\(table) is locked by pid \(pid) (application_name 'holder-under-test'"
        #expect(result.exitCode == 1, "\(arguments): \(result)")
        #expect(elapsed >= 2 && elapsed < 15, "\(arguments) ended after \(elapsed) s")
        let query = "idle in transaction, query: LOCK TABLE orchestrator.\(table) IN ACCESS EXCLUSIVE MODE)"
        #expect(result.stderrLines.contains { $0.hasPrefix("note: waiting for a lock: \(named)") && $0.hasSuffix(query) }, "\(arguments): \(result)")
        let error = try #require(result.stderrLines.last, "\(arguments): \(result)")
        #expect(error.hasPrefix(errorPrefix) && error.contains(named), "\(arguments): \(result)")
    }

    @Test("status, status --check, plan, apply and apply --online wait --lock-wait for orchestrator.stores, naming the holder, then exit 1", integration)
    func storesLocked() throws {
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try RecipesStore.create(at: "Recipes 1", url: url, on: connection)
            let before = try RecipesStore.fingerprint(on: connection)
            try Self.holdingLock(on: "stores", url: url) { pid in
                try Self.expectBounded(["status"], pid: pid, table: "stores", errorPrefix: "error: could not check: ", url: url)
                try Self.expectBounded(["status", "--check"], pid: pid, table: "stores", errorPrefix: "error: could not check: ", url: url)
                try Self.expectBounded(["plan"], pid: pid, table: "stores", url: url)
                try Self.expectBounded(["apply"], pid: pid, table: "stores", url: url)
                try Self.expectBounded(["apply", "--online"], pid: pid, table: "stores", url: url)
            }
            #expect(try RecipesStore.fingerprint(on: connection) == before)
            #expect(try RecipesStore.run(["status", "--check"], url: url).exitCode == 2)
        }
    }

    @Test("history waits --lock-wait for orchestrator.migrations, naming the holder, then exits 1", integration)
    func migrationsLocked() throws {
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try RecipesStore.create(at: "Recipes 1", url: url, on: connection)
            try Self.holdingLock(on: "migrations", url: url) { pid in
                try Self.expectBounded(["history"], pid: pid, table: "migrations", url: url)
            }
            let history = try RecipesStore.run(["history"], url: url)
            #expect(history.exitCode == 0 && history.stdoutLines.first == "store recipes: 1 recorded migration", "\(history)")
        }
    }
}
