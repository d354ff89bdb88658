import Foundation
import PostgresClient
import Testing
import TestSupport

/// Issue 20.1: after a heavyweight swap, a transaction that read the old store (a REPEATABLE
/// READ report, a pg_dump) keeps a lock on its tables, which the cleanup's DROP needs. The
/// apply waits a bounded time, ends 0 saying the cleanup is deferred, and the next apply does it.
@Suite("Deferred cleanup after a swap")
struct DeferredCleanupTests {
    static func functions(in schema: String, on connection: PostgresConnection) throws -> Int {
        Int(try connection.execute("""
            SELECT count(*) AS n FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = \(schema)
            """).int(0, "n") ?? 0)
    }

    @Test("a REPEATABLE READ reader held across the swap: apply ends 0 in bounded time, cleanup deferred, the next apply cleans up", integration, arguments: [[], ["--online"], ["--no-backup"]])
    func readerHeldAcrossSwap(options: [String]) throws {
        try withAppliedStore { folder, url, connection in
            try connection.execute("INSERT INTO kitchen.chef (name) SELECT 'chef ' || i FROM generate_series(1, 20) AS i")
            try connection.execute("""
                INSERT INTO kitchen.recipe (name, temperature, amount, chef_pk)
                SELECT 'recipe ' || i, 300 + i, i, (SELECT min(_pk) FROM kitchen.chef) FROM generate_series(1, 500) AS i
                """)
            let (reader, pid) = try MetadataLockTests.session(named: "report-under-test", url: url)
            defer { reader.close() }
            try reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            try reader.execute("SELECT count(*) FROM kitchen.chef")
            try reader.execute("SELECT count(*) FROM kitchen.recipe")

            let started = Date()
            let applied = try RunningOrchestrator(["apply", "--model", folder.path, "--lock-timeout", "200"] + options, databaseURL: url)
                .finish(killingAfter: 120)
            let elapsed = Date().timeIntervalSince(started)
            print("apply \(options.joined(separator: " ")) with a REPEATABLE READ reader held across the swap: exit \(applied.exitCode) after \(String(format: "%.1f", elapsed)) s")
            #expect(applied.exitCode == 0, "\(applied)")
            #expect(elapsed < 60, "apply ended after \(elapsed) s")
            let old = options == ["--no-backup"] ? "kitchen~retired" : "kitchen~"
            let note = try #require(applied.stderrLines.first { $0.hasPrefix("note: cleanup deferred: ") }, "\(applied)")
            #expect(note.contains("is locked by pid \(pid) (application_name 'report-under-test'"), "\(applied)")
            #expect(note.contains("not granted within 3 attempt(s) of 200 ms (--lock-timeout)"), "\(applied)")
            if options == ["--no-backup"] {
                #expect(note.hasPrefix("note: cleanup deferred: the old store \"kitchen~retired\" was not dropped yet: "), "\(applied)")
                #expect(applied.stdoutLines.last == "store kitchen: the old store is set aside as schema \"kitchen~retired\" until it can be dropped: the next apply drops it (--no-backup)", "\(applied)")
            } else {
                #expect(note.hasPrefix("note: cleanup deferred: the change triggers on the backup \"kitchen~\" were not dropped yet: "), "\(applied)")
            }
            // The step is done: the new store holds every row; the triggers wait on the old tables.
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 2")
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe WHERE abs(temperature_c - (300 + total_cost - 32.0) / 1.8) < 1e-9 AND author_pk IS NOT NULL").int(0, "n") == 500)
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.chef").int(0, "n") == 20)
            #expect(try Self.functions(in: old, on: connection) >= 1)
            #expect(try KillAndResumeTests.changeTriggers(on: connection).keys.sorted() == ["chef", "recipe"])
            // The reader still sees the old store as it read it.
            #expect(try reader.execute("SELECT count(*) AS n FROM \"\(unsafeRaw: old)\".recipe").int(0, "n") == 500)
            try reader.execute("COMMIT")

            let next = try OrchestratorBinary.run(["apply", "--model", folder.path], databaseURL: url)
            #expect(next.exitCode == 0, "\(next)")
            #expect(next.stdoutLines == ["store kitchen: already up to date at 'Kitchen 2'; nothing to do"], "\(next)")
            #expect(next.stderr.isEmpty, "\(next)")
            #expect(try KillAndResumeTests.changeTriggers(on: connection) == [:])
            #expect(try Self.functions(in: old, on: connection) == 0)
            #expect(try schemaExists("kitchen~retired", on: connection) == false)
            #expect(try schemaExists("kitchen~", on: connection) == (options != ["--no-backup"]))
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe").int(0, "n") == 500)
        }
    }

    @Test("restore finishes a deferred cleanup before it puts the backup back", integration)
    func restoreFinishesDeferredCleanup() throws {
        try withAppliedStore { folder, url, connection in
            try connection.execute("INSERT INTO kitchen.chef (name) SELECT 'chef ' || i FROM generate_series(1, 5) AS i")
            let (reader, _) = try MetadataLockTests.session(named: "report-under-test", url: url)
            defer { reader.close() }
            try reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            try reader.execute("SELECT count(*) FROM kitchen.chef")
            let applied = try RunningOrchestrator(["apply", "--model", folder.path, "--lock-timeout", "200"], databaseURL: url).finish(killingAfter: 120)
            #expect(applied.exitCode == 0 && applied.stderrLines.contains { $0.hasPrefix("note: cleanup deferred: ") }, "\(applied)")
            try reader.execute("COMMIT")

            let restored = try OrchestratorBinary.run(["restore", "--model", folder.path], databaseURL: url)
            #expect(restored.exitCode == 0, "\(restored)")
            #expect(try KillAndResumeTests.changeTriggers(on: connection).isEmpty)
            #expect(try Self.functions(in: "kitchen", on: connection) == 0)
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'kitchen'").value(0, "version_name") == "Kitchen 1")
            // The restored store takes writes: no trigger of the migration is left on it.
            try connection.execute("INSERT INTO kitchen.chef (name) VALUES ('after restore')")
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.chef").int(0, "n") == 6)
        }
    }
}
