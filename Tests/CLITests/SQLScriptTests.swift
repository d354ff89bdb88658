import Foundation
import PostgresClient
import Testing
import TestSupport

/// `plan --format sql`: the script, run with psql on one copy of a store, leaves it as `apply`
/// leaves another.
@Suite("plan --format sql")
struct SQLScriptTests {
    /// History columns that only the run knows (when, how long, who), and timestamps of the
    /// metadata rows: everything else must be equal.
    static let runColumns: [String: [String]] = [
        "migrations": ["started_at", "finished_at", "duration_ms", "applied_by"],
        "stores": ["created_at", "updated_at"], "store_schemas": ["created_at"], "model_versions": ["recorded_at"],
    ]

    /// Prepares two databases alike with `setUp`, runs the script of `plan arguments` on the
    /// first with psql and `apply arguments` on the second, and compares the catalogs, the
    /// metadata and the rows of `schemas`. Returns the script.
    @discardableResult
    static func scriptLeavesTheStoreAsApplyDoes(_ arguments: [String], schemas: [String], setUp: (String) throws -> Void) throws -> String {
        try withTemporaryFolder { folder in
            try TestDatabase.withFreshDatabase { scripted in
                try TestDatabase.withFreshDatabase { applied in
                    try setUp(scripted)
                    try setUp(applied)
                    let plan = try OrchestratorBinary.run(["plan"] + arguments + ["--format", "sql"], databaseURL: scripted)
                    try #require(plan.exitCode == 0, "\(plan)")
                    #expect(plan.stderr.isEmpty, "\(plan)")
                    let file = try write(plan.stdout, to: "plan.sql", in: folder)
                    let psql = try Pipeline.client("psql", ["-X", "-q", "-1", "-v", "ON_ERROR_STOP=1", "-f", file.path, scripted])
                    #expect(psql.exitCode == 0, "\(psql)\n\(plan.stdout)")
                    #expect(!psql.stderr.contains("ERROR") && !psql.stderr.contains("WARNING"), "notices only: \(psql)")

                    let apply = try OrchestratorBinary.run(["apply"] + arguments, databaseURL: applied)
                    try #require(apply.exitCode == 0, "\(apply)")

                    #expect(try Pipeline.catalog(scripted) == Pipeline.catalog(applied), "the same tables, columns, constraints, indexes, triggers and functions")
                    let metadata = try Pipeline.rows(scripted, schemas: ["orchestrator"], ignoring: runColumns)
                    #expect(metadata == (try Pipeline.rows(applied, schemas: ["orchestrator"], ignoring: runColumns)))
                    #expect(try Pipeline.value(scripted, "SELECT count(*) FROM orchestrator.migrations WHERE applied_by LIKE current_user || ' (psql script by %)'") != "0")
                    #expect(try Pipeline.rows(scripted, schemas: schemas) == Pipeline.rows(applied, schemas: schemas), "the same rows")
                    #expect(!(try Pipeline.rows(scripted, schemas: schemas)).isEmpty || schemas == ["recipes"])
                    return plan.stdout
                }
            }
        }
    }

    @Test("the script of a create step creates the store and its metadata as apply does", integration)
    func createStep() throws {
        let script = try Self.scriptLeavesTheStoreAsApplyDoes(["--model", "migrations"], schemas: ["recipes"]) { _ in }
        let lines = script.split(separator: "\n").map(String.init)
        #expect(Array(lines.prefix(4)) == [
            "-- store recipes: does not exist; this script creates it at 'Recipes 3' (model Recipes)",
            "-- Written by orchestrator plan --format sql. Review it, then run it as one transaction:",
            "--   psql -1 -v ON_ERROR_STOP=1 -f FILE",
            "-- It leaves the store, its metadata and its history as orchestrator apply would.",
        ])
        #expect(lines.contains("SET LOCAL lock_timeout = 500;"))
        #expect(lines.contains { $0.hasPrefix("SELECT pg_advisory_xact_lock(") })
    }

    @Test("the script of a lightweight step leaves rows, metadata and history as apply does", integration)
    func lightweightStep() throws {
        let script = try Self.scriptLeavesTheStoreAsApplyDoes(["--model", "migrations"], schemas: ["recipes"], setUp: Pipeline.recipesAtVersionOne)
        #expect(script.hasPrefix("-- store recipes: from 'Recipes 1' (model hash "))
        #expect(script.contains("SELECT :orchestrator_rows + :ROW_COUNT AS orchestrator_rows \\gset"))
    }

    @Test("the script of a set-based heavyweight step swaps the store in and keeps the backup, as apply does", integration)
    func heavyweightStep() throws {
        try withTemporaryFolder { model in
            let script = try Self.scriptLeavesTheStoreAsApplyDoes(["--model", model.path], schemas: ["kitchen", "kitchen~"]) { url in
                try Pipeline.kitchenAtVersionOne(url, model: model)
            }
            #expect(script.contains("-- pass 1 of "))
            #expect(script.contains("ALTER SCHEMA \"kitchen\" RENAME TO \"kitchen~\""))
        }
    }

    @Test("a script that runs on a store at another version stops at its guard and changes nothing", integration)
    func guardStopsAtAnotherVersion() throws {
        try withTemporaryFolder { folder in
            try TestDatabase.withFreshDatabase { url in
                try Pipeline.recipesAtVersionOne(url)
                let plan = try OrchestratorBinary.run(["plan", "--model", "migrations", "--format", "sql"], databaseURL: url)
                try #require(plan.exitCode == 0, "\(plan)")
                let file = try write(plan.stdout, to: "plan.sql", in: folder)
                let meanwhile = try OrchestratorBinary.run(["apply", "--model", "migrations", "--to", "Recipes 2"], databaseURL: url)
                try #require(meanwhile.exitCode == 0, "\(meanwhile)")
                let before = try Pipeline.dump(url)
                let psql = try Pipeline.client("psql", ["-X", "-q", "-1", "-v", "ON_ERROR_STOP=1", "-f", file.path, url])
                #expect(psql.exitCode == 3, "\(psql)")
                #expect(psql.stderr.contains("store recipes is not at 'Recipes 1' (model hash "), "\(psql)")
                #expect(try Pipeline.dump(url) == before)
            }
        }
    }

    @Test("a step that needs Swift is refused in this format, naming it", integration)
    func streamedStepIsRefused() throws {
        try withTemporaryFolder { folder in
            try TestDatabase.withFreshDatabase { url in
                try Pipeline.kitchenAtVersionOne(url, model: folder)
                let plan = try OrchestratorBinary.run(["plan", "--model", folder.path, "--streaming", "--format", "sql"], databaseURL: url)
                #expect(plan.exitCode == 1, "\(plan)")
                #expect(plan.stdout.isEmpty, "\(plan)")
                #expect(plan.stderr == "error: plan --format sql: step 1 of 1 (heavyweight 'Kitchen 1' -> 'Kitchen 2') needs Swift, which a SQL script cannot run: entity mapping RecipeToRecipe streams its rows; review it with plan and run it with apply\n", "\(plan)")

                let people = try OrchestratorBinary.run(["apply", "--model", "Examples/people", "--to", "People 1"], databaseURL: url)
                try #require(people.exitCode == 0, "\(people)")
                let policy = try OrchestratorBinary.run(
                    ["plan", "--model", "Examples/people", "--format", "sql"], databaseURL: url, executable: "orchestrator-with-policies"
                )
                #expect(policy.exitCode == 1, "\(policy)")
                #expect(policy.stdout.isEmpty, "\(policy)")
                #expect(policy.stderr.hasPrefix("error: plan --format sql: step 1 of 1 (heavyweight 'People 1' -> 'People 2') needs Swift, which a SQL script cannot run: "), "\(policy)")
                #expect(policy.stderr.contains(" through custom policy PersonSplit"), "\(policy)")

                // The plain binary does not have the policy: the plan is blocked, and says so.
                let blocked = try OrchestratorBinary.run(["plan", "--model", "Examples/people", "--format", "sql"], databaseURL: url)
                #expect(blocked.exitCode == 1, "\(blocked)")
                #expect(blocked.stderr.hasPrefix("error: plan --format sql: the plan cannot run, so no script is written: "), "\(blocked)")
            }
        }
    }
}
