import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// `restore` undoes a heavyweight step from its backup; `history` lists what happened.
@Suite("restore and history")
struct RestoreAndHistoryTests {
    static let kitchen1 = "b99bf03bee926ab73f70bc44a8d447045f33b0e0de7f9ec16baef133ffe2af27"
    static let kitchen2 = "726d29ab780e11030e153b293ccac22b02be00cbb83f4283630425300157ebc2"

    /// History lines with the times, durations and who ran them replaced by placeholders.
    static func normalized(_ lines: [String]) -> [String] {
        lines.map { line in
            line.replacingOccurrences(of: #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"#, with: "<time>", options: .regularExpression)
                .replacingOccurrences(of: #"\d+ ms, by .*$"#, with: "<n> ms, by <who>", options: .regularExpression)
        }
    }

    static func kitchen(_ arguments: [String], _ folder: URL, url: String) throws -> CLIResult {
        try OrchestratorBinary.run(arguments + ["--model", folder.path], databaseURL: url)
    }

    static func rows(_ table: String, _ columns: String, on connection: PostgresConnection) throws -> [[String?]] {
        try connection.execute("SELECT \(unsafeRaw: columns) FROM \(unsafeRaw: table) ORDER BY _pk").rows
    }

    @Test("restore puts the backup back with its metadata, keeps the replaced store as <store>~undone; the history records it", integration)
    func restoreUndoesAHeavyweightStep() throws {
        try withTemporaryFolder { folder in
            try KitchenModel.write(in: folder)
            try TestDatabase.withFreshDatabase { url in
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                let none = try Self.kitchen(["restore"], folder, url: url)
                #expect(none.exitCode == 1 && none.stdout.isEmpty, "\(none)")
                #expect(none.stderr == "error: store kitchen does not exist (no metadata in orchestrator.stores): there is nothing to restore; nothing was changed\n", "\(none)")

                #expect(try Self.kitchen(["apply", "--to", "Kitchen 1"], folder, url: url).exitCode == 0)
                try connection.execute("INSERT INTO kitchen.chef (name) VALUES ('Ada'), ('Bo')")
                try connection.execute("INSERT INTO kitchen.recipe (name, temperature, amount, chef_pk) SELECT 'recipe ' || i, 212, i, 1 FROM generate_series(1, 3) AS i")
                let noBackup = try Self.kitchen(["restore"], folder, url: url)
                #expect(noBackup.exitCode == 1 && noBackup.stdout.isEmpty, "\(noBackup)")
                #expect(noBackup.stderr == "error: store kitchen has no backup: schema \"kitchen~\" does not exist (a heavyweight step keeps one unless --no-backup); nothing was changed\n", "\(noBackup)")
                let original = try Self.rows("kitchen.recipe", "_pk, name, temperature, amount, chef_pk", on: connection)

                #expect(try Self.kitchen(["apply"], folder, url: url).exitCode == 0)
                try connection.execute("INSERT INTO kitchen.recipe (name, temperature_c, total_cost) VALUES ('after', 20, 7)")
                let migrated = try Self.rows("kitchen.recipe", "_pk, name, temperature_c, total_cost, author_pk", on: connection)
                #expect(migrated.count == 4)

                let restore = try Self.kitchen(["restore"], folder, url: url)
                #expect(restore.exitCode == 0 && restore.stderr.isEmpty, "\(restore)")
                #expect(restore.stdoutLines == [
                    "store kitchen: restored from its backup, now at 'Kitchen 1' (was 'Kitchen 2')",
                    "store kitchen: the replaced store is kept as schema \"kitchen~undone\" (drop it when you no longer need it)",
                ], "\(restore)")
                #expect(try Self.rows("kitchen.recipe", "_pk, name, temperature, amount, chef_pk", on: connection) == original)
                #expect(try Self.rows("\"kitchen~undone\".recipe", "_pk, name, temperature_c, total_cost, author_pk", on: connection) == migrated)
                #expect(try !schemaExists("kitchen~", on: connection))
                #expect(try connection.execute("SELECT version_name, model_hash FROM orchestrator.stores").rows == [["Kitchen 1", Self.kitchen1]])
                let status = try Self.kitchen(["status", "--check"], folder, url: url)
                #expect(status.exitCode == 2, "\(status)")
                #expect(status.stdoutLines == [
                    "store kitchen: at 'Kitchen 1', model hash \(Self.kitchen1)",
                    "current version: 'Kitchen 2', model hash \(Self.kitchen2)",
                    "compatible: no, migration required (see `orchestrator plan`)",
                    "drift: none from the contract of 'Kitchen 1'",
                ], "\(status)")

                let history = try Self.kitchen(["history"], folder, url: url)
                #expect(history.exitCode == 0 && history.stderr.isEmpty, "\(history)")
                #expect(Self.normalized(history.stdoutLines) == [
                    "store kitchen: 3 recorded migrations",
                    "#1 <time> create 'Kitchen 1': succeeded, 0 rows, <n> ms, by <who>",
                    "#2 <time> heavyweight 'Kitchen 1' -> 'Kitchen 2': succeeded, 5 rows, <n> ms, by <who>",
                    "#3 <time> restore 'Kitchen 2' -> 'Kitchen 1': succeeded, 0 rows, <n> ms, by <who>",
                ], "\(history)")
                let json = try OrchestratorBinary.run(["history", "--store", "kitchen", "--format", "json"], databaseURL: url)
                #expect(json.exitCode == 0 && json.stderr.isEmpty, "\(json)")
                let entries = try #require(try jsonObject(json.stdout)["migrations"] as? [[String: Any]], "\(json)")
                #expect(entries.map { "\($0["id"]!) \($0["kind"]!) \($0["from"]!) \($0["to"]!) \($0["fromHash"]!) \($0["toHash"]!) \($0["rows"]!) \($0["outcome"]!) \($0["error"]!) \($0["statements"]!)" } == [
                    "1 create <null> Kitchen 1 <null> \(Self.kitchen1) 0 succeeded <null> 5",
                    "2 heavyweight Kitchen 1 Kitchen 2 \(Self.kitchen1) \(Self.kitchen2) 5 succeeded <null> 36",
                    "3 restore Kitchen 2 Kitchen 1 \(Self.kitchen2) \(Self.kitchen1) 0 succeeded <null> 2",
                ], "\(json)")
                for entry in entries {
                    #expect(Set(entry.keys) == ["id", "kind", "from", "to", "fromHash", "toHash", "startedAt", "finishedAt", "rows", "durationMs", "appliedBy", "outcome", "error", "statements"])
                    #expect(Self.normalized([entry["startedAt"] as? String ?? ""]) == ["<time>"] && entry["durationMs"] is Int && entry["appliedBy"] is String)
                }

                // The backup is gone: a second restore has nothing to put back.
                let again = try Self.kitchen(["restore"], folder, url: url)
                #expect(again.exitCode == 1 && again.stderr == noBackup.stderr, "\(again)")
            }
        }
    }

    @Test("restore refuses a backup of an unknown version, and an existing <store>~undone, with nothing changed", integration)
    func restoreRefusesUnknownVersions() throws {
        try withTemporaryFolder { folder in
            try KitchenModel.write(in: folder)
            try TestDatabase.withFreshDatabase { url in
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                #expect(try Self.kitchen(["apply", "--to", "Kitchen 1"], folder, url: url).exitCode == 0)
                try connection.execute("INSERT INTO kitchen.chef (name) VALUES ('Ada')")
                #expect(try Self.kitchen(["apply"], folder, url: url).exitCode == 0)
                func fingerprint() throws -> [[String?]] {
                    try connection.execute("""
                        SELECT (SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace WHERE nspname LIKE 'kitchen%'),
                               (SELECT version_name FROM orchestrator.stores), (SELECT count(*) FROM orchestrator.migrations),
                               (SELECT string_agg(schema || ' ' || role, ',') FROM orchestrator.store_schemas)
                        """).rows
                }

                try connection.execute("CREATE SCHEMA \"kitchen~undone\"")
                let undone = try Self.kitchen(["restore"], folder, url: url)
                #expect(undone.exitCode == 1 && undone.stdout.isEmpty, "\(undone)")
                #expect(undone.stderr == "error: schema \"kitchen~undone\" exists (an earlier restore kept the store it replaced there); drop or rename it first; nothing was changed\n", "\(undone)")
                try connection.execute("DROP SCHEMA \"kitchen~undone\"")

                try connection.execute("UPDATE orchestrator.migrations SET from_hash = repeat('ab', 32) WHERE kind = 'heavyweight'")
                let before = try fingerprint()
                let unknown = try Self.kitchen(["restore"], folder, url: url)
                #expect(unknown.exitCode == 1 && unknown.stdout.isEmpty, "\(unknown)")
                #expect(unknown.stderr == "error: the backup \"kitchen~\" of store kitchen holds version 'Kitchen 1', whose model hash is known neither from the history nor from the model's files or the database's record of versions; nothing was changed\n", "\(unknown)")
                try connection.execute("UPDATE orchestrator.store_schemas SET version_name = NULL")
                let unrecorded = try Self.kitchen(["restore"], folder, url: url)
                #expect(unrecorded.exitCode == 1 && unrecorded.stderr == "error: the backup \"kitchen~\" of store kitchen does not record its version; nothing was changed\n", "\(unrecorded)")
                #expect(try fingerprint() == before)

                try connection.execute("UPDATE orchestrator.store_schemas SET version_name = 'Kitchen 1'")
                try connection.execute("UPDATE orchestrator.migrations SET from_hash = \(Self.kitchen1) WHERE kind = 'heavyweight'")
                let json = try Self.kitchen(["restore", "--format", "json"], folder, url: url)
                #expect(json.exitCode == 0 && json.stderr.isEmpty, "\(json)")
                #expect(json.stdout == "{\"store\":\"kitchen\",\"from\":\"Kitchen 2\",\"to\":\"Kitchen 1\",\"undoneSchema\":\"kitchen~undone\"}\n", "\(json)")
            }
        }
    }

    @Test("history of a store with nothing recorded, and without --store or --model", integration)
    func historyOfNothing() throws {
        try TestDatabase.withFreshDatabase { url in
            let empty = try OrchestratorBinary.run(["history", "--store", "nothing"], databaseURL: url)
            #expect(empty.exitCode == 0 && empty.stdoutLines == ["store nothing: 0 recorded migrations"] && empty.stderr.isEmpty, "\(empty)")
            let json = try OrchestratorBinary.run(["history", "--model", "migrations", "--format", "json"], databaseURL: url)
            #expect(json.exitCode == 0 && json.stdout == "{\"store\":\"recipes\",\"migrations\":[]}\n", "\(json)")
            let usage = try OrchestratorBinary.run(["history"], databaseURL: url)
            #expect(usage.exitCode == 64 && usage.stderr.contains("pass --store, or --model to name the store after the model"), "\(usage)")
        }
    }
}
