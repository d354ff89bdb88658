import Foundation
import PostgresClient
import Testing
import TestSupport

/// Issue 20.2: a lock another session holds on orchestrator's own tables (VACUUM FULL,
/// pg_repack, an ALTER) makes no command hang: each waits `--lock-wait`, names the holder
/// while it waits and in its error, and exits 1 with nothing changed.
@Suite("Locked metadata")
struct MetadataLockTests {
    /// A session showing as `application_name` in `pg_stat_activity`, and its pid.
    static func session(named applicationName: String, url: String) throws -> (PostgresConnection, Int) {
        let session = try PostgresConnection(url: url)
        try session.execute("SELECT set_config('application_name', \(applicationName), false)")
        return (session, Int(try #require(session.execute("SELECT pg_backend_pid() AS pid").int(0, "pid"))))
    }

    /// Holds `LOCK TABLE orchestrator.<table> IN ACCESS EXCLUSIVE MODE` in an open transaction
    /// while `body` runs, as session `holder-under-test`; `body` gets its pid.
    static func holdingLock(on table: String, url: String, _ body: (Int) throws -> Void) throws {
        let (holder, pid) = try session(named: "holder-under-test", url: url)
        defer { holder.close() }
        try holder.execute("BEGIN")
        try holder.execute("LOCK TABLE orchestrator.\(unsafeRaw: table) IN ACCESS EXCLUSIVE MODE")
        defer { _ = try? holder.execute("ROLLBACK") }
        try body(pid)
    }

    /// A fresh database with the store `recipes` at 'Recipes 1', holding rows.
    static func withRecipesStore(_ body: (String, PostgresConnection) throws -> Void) throws {
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try RecipesStore.create(at: "Recipes 1", url: url, on: connection)
            try body(url, connection)
        }
    }

    /// Runs `arguments` with `--lock-wait 2` and checks: exit 1 after `seconds` (2 to 15 by
    /// default), a note naming the holder while it waited, an error naming it (and `errorPrefix`).
    static func expectBounded(
        _ arguments: [String], pid: Int, table: String, errorPrefix: String = "error: ", seconds: Range<Double> = 2..<15, url: String
    ) throws {
        let started = Date()
        let result = try RunningOrchestrator(arguments + ["--model", "migrations", "--lock-wait", "2"], databaseURL: url).finish(killingAfter: 60)
        let elapsed = Date().timeIntervalSince(started)
        let named = "orchestrator.\(table) is locked by pid \(pid) (application_name 'holder-under-test'"
        #expect(result.exitCode == 1, "\(arguments): \(result)")
        #expect(seconds.contains(elapsed), "\(arguments) ended after \(elapsed) s")
        print("\(arguments.joined(separator: " ")) with orchestrator.\(table) locked: exit \(result.exitCode) after \(String(format: "%.1f", elapsed)) s")
        let query = "idle in transaction, query: LOCK TABLE orchestrator.\(table) IN ACCESS EXCLUSIVE MODE)"
        #expect(result.stderrLines.contains { $0.hasPrefix("note: waiting for a lock: \(named)") && $0.hasSuffix(query) }, "\(arguments): \(result)")
        let error = try #require(result.stderrLines.last, "\(arguments): \(result)")
        #expect(error.hasPrefix(errorPrefix) && error.contains(named), "\(arguments): \(result)")
    }

    @Test("status, status --check, plan, apply and apply --online wait --lock-wait for orchestrator.stores, naming the holder, then exit 1", integration)
    func storesLocked() throws {
        try Self.withRecipesStore { url, connection in
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

    /// `apply` meets the lock in its step's transaction (the history row), which runs under
    /// `--lock-timeout` and is retried with backoff: about 16 to 27 s with 10 attempts of 500 ms.
    @Test("history waits --lock-wait for orchestrator.migrations, and apply its retries, naming the holder, then exit 1", integration)
    func migrationsLocked() throws {
        try Self.withRecipesStore { url, connection in
            let before = try RecipesStore.fingerprint(on: connection)
            try Self.holdingLock(on: "migrations", url: url) { pid in
                try Self.expectBounded(["history"], pid: pid, table: "migrations", url: url)
                try Self.expectBounded(["apply"], pid: pid, table: "migrations", seconds: 2..<50, url: url)
            }
            #expect(try RecipesStore.fingerprint(on: connection) == before)
            let history = try RecipesStore.run(["history"], url: url)
            #expect(history.exitCode == 0 && history.stdoutLines.first == "store recipes: 1 recorded migration", "\(history)")
        }
    }
}
