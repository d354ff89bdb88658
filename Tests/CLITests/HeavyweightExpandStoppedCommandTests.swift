import Foundation
import PostgresClient
import Testing
import TestSupport

/// `rollback` of an `apply --expand` of a heavyweight step stopped before its wait for
/// `complete` (docs/rolling-deploys-heavyweight.md), as a user runs it: the run paused by
/// `control pause` stops at `--pause-timeout`, the old release writes on, `rollback` drops the
/// staging work and the store, never changed, keeps every row; a later `apply` migrates it.
@Suite(integration) struct HeavyweightExpandStoppedCommandTests {
    @Test func rollbackDropsTheStagingWorkOfAnExpandStoppedBeforeItsWait() throws {
        try withAppliedStore { folder, url, connection in
            func run(_ arguments: [String], model: Bool = true) throws -> CLIResult {
                try OrchestratorBinary.run(arguments + (model ? ["--model", folder.path] : []) + ["--store", "kitchen"], databaseURL: url)
            }
            try connection.execute("INSERT INTO kitchen.chef (_entity, name) SELECT 'Chef', 'chef ' || n FROM generate_series(1, 30) AS n")
            try connection.execute("""
                INSERT INTO kitchen.recipe (_entity, name, temperature, amount, chef_pk)
                SELECT 'Recipe', 'soup ' || _pk, 212, 3, _pk FROM kitchen.chef
                """)

            #expect(try run(["control", "pause"], model: false).exitCode == 0)
            let stopped = try run(["apply", "--expand", "--pause-timeout", "1"])
            #expect(stopped.exitCode == 1 && stopped.stderr.contains("paused by orchestrator control"), "\(stopped)")
            #expect(try run(["control", "resume"], model: false).exitCode == 0)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'kitchen~staging'").int(0, "n") == 1)
            // The old release writes on meanwhile, through the change triggers the run left.
            try connection.execute("INSERT INTO kitchen.recipe (_entity, name, temperature, amount) VALUES ('Recipe', 'written meanwhile', 32, 1)")
            try connection.execute("UPDATE kitchen.recipe SET amount = 4 WHERE name = 'soup 1'")
            let before = try connection.execute("SELECT row_to_json(r)::text FROM kitchen.recipe AS r ORDER BY _pk").rows

            let dry = try run(["rollback", "--dry-run", "--format", "json"], model: false)
            #expect(dry.exitCode == 0, "\(dry)")
            let planned = try jsonObject(dry.stdout)
            #expect(planned["rolledBack"] as? Bool == false && planned["statements"] as? [String] == [#"DROP SCHEMA IF EXISTS "kitchen~staging" CASCADE"#], "\(dry)")
            let rollback = try run(["rollback"], model: false)
            #expect(rollback.exitCode == 0, "\(rollback)")
            #expect(rollback.stdoutLines.first == #"store kitchen: rolled back 'Kitchen 2' -> 'Kitchen 1': dropped "kitchen~staging", ran 1 statement ("# + rollback.stdoutLines.first!.split(separator: "(").last!, "\(rollback)")
            #expect(rollback.stdout.contains("nothing lost: 'Kitchen 1' holds every row and value"), "\(rollback)")

            let status = try jsonObject(try run(["status", "--format", "json"]).stdout)
            #expect(status["storeVersion"] as? String == "Kitchen 1" && status["liveVersions"] == nil && status["unfinishedExpand"] == nil, "\(status)")
            #expect(try connection.execute("SELECT row_to_json(r)::text FROM kitchen.recipe AS r ORDER BY _pk").rows == before)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'kitchen~staging'").int(0, "n") == 0)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_trigger WHERE tgname LIKE '\\_orchestrator\\_%'").int(0, "n") == 0)
            let kinds = try connection.execute("SELECT kind FROM orchestrator.migrations WHERE store = 'kitchen' ORDER BY id").rows.map { $0[0] ?? "" }
            #expect(kinds.last == "rollback", "\(kinds)")
            let again = try run(["rollback"], model: false)
            #expect(again.exitCode == 1 && again.stderr.contains("nothing to roll back"), "\(again)")

            // The store migrates as the offline step would: every recipe, the one written meanwhile included.
            #expect(try run(["apply"]).exitCode == 0)
            #expect(try connection.execute("SELECT count(*) AS n FROM kitchen.recipe").int(0, "n") == 31)
            #expect(try connection.execute("SELECT total_cost FROM kitchen.recipe WHERE name = 'soup 1'").rows == [["4"]])
            #expect(try connection.execute("SELECT temperature_c FROM kitchen.recipe WHERE name = 'written meanwhile'").rows == [["0"]])
        }
    }
}
