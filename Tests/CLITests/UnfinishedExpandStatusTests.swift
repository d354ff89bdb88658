import Foundation
import PostgresClient
import Testing
import TestSupport

/// An `apply --expand` stopped after the phase that made `"shop@v1"` (a rename before a
/// backfill: the views come first) and before its switch-over: no expansion is recorded, and
/// `status` still says what there is and how to go on; `rollback` without the model refuses, naming it.
@Suite(integration) struct UnfinishedExpandStatusTests {
    /// `name` renamed `title`, and `rating` made required with a default (a backfill).
    static func writeModel(in folder: URL) throws -> String {
        let model = folder.appendingPathComponent("Recipes")
        try CLITests.write("name: Recipes\nversions: [v1, v2]\n", to: "model.yaml", in: model)
        try CLITests.write("entities:\n  Recipe:\n    attributes:\n      name: string\n      rating: {type: int16, optional: true}\n", to: "v1.yaml", in: model)
        try CLITests.write(
            "entities:\n  Recipe:\n    attributes:\n      title: {type: string, renamingIdentifier: name}\n      rating: {type: int16, optional: false, default: 3}\n",
            to: "v2.yaml", in: model
        )
        return model.path
    }

    /// A store `shop` at v1 holding 50 recipes, in a fresh database, whose `apply --expand` was
    /// paused at its first batch (the backfill, after the views and the rename) and stopped by
    /// `--pause-timeout`.
    struct StoppedExpand {
        var url: String
        var model: String
        var connection: PostgresConnection

        /// The binary with `--model` (unless `model` is false) and `--store shop`.
        func run(_ arguments: [String], model withModel: Bool = true) throws -> CLIResult {
            try OrchestratorBinary.run(arguments + (withModel ? ["--model", model, "--store", "shop"] : ["--store", "shop"]), databaseURL: url)
        }
    }

    static func withStoppedExpand(_ body: (StoppedExpand) throws -> Void) throws {
        try TestDatabase.withFreshDatabase { url in
            try withTemporaryFolder { folder in
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                let store = StoppedExpand(url: url, model: try writeModel(in: folder), connection: connection)
                #expect(try store.run(["apply", "--to", "v1"]).exitCode == 0)
                try connection.execute("INSERT INTO shop.recipe (_entity, name) SELECT 'Recipe', 'r' || n FROM generate_series(1, 50) AS n")
                #expect(try store.run(["control", "pause"], model: false).exitCode == 0)
                let stopped = try store.run(["apply", "--expand", "--batch-size", "10", "--pause-timeout", "1"])
                #expect(stopped.exitCode == 1 && stopped.stderr.contains("stopped between batches"), "\(stopped)")
                #expect(try store.run(["control", "resume"], model: false).exitCode == 0)
                try body(store)
            }
        }
    }

    @Test("status names an apply --expand stopped before its switch-over: the old version served by its views, apply --expand to continue or rollback --model; rollback without the model refuses it, nothing changed")
    func statusNamesAnExpandStoppedBeforeItsSwitchOver() throws {
        try Self.withStoppedExpand { store in
            let (url, model, connection) = (store.url, store.model, store.connection)
            func run(_ arguments: [String], model withModel: Bool = true) throws -> CLIResult { try store.run(arguments, model: withModel) }
            #expect(try connection.execute(#"SELECT count(*) AS n FROM "shop@v1".recipe WHERE name LIKE 'r%'"#).int(0, "n") == 50)

            let json = try run(["status", "--format", "json"])
            let report = try jsonObject(json.stdout)
            #expect(report["liveVersions"] == nil && report["storeVersion"] as? String == "v1", "\(json)")
            let unfinished = try #require(report["unfinishedExpand"] as? [String: Any], "\(json)")
            #expect(unfinished["from"] as? String == "v1" && unfinished["to"] as? String == "v2", "\(unfinished)")
            #expect(unfinished["versionSchemas"] as? [String] == ["shop@v1"], "\(unfinished)")
            #expect(unfinished["servedVersions"] as? [[String: String]] == [["version": "v1", "schema": "shop@v1"]], "\(unfinished)")
            #expect(unfinished["continueWith"] as? String == "apply --expand --to 'v2'" && unfinished["rollback"] as? Bool == true, "\(unfinished)")
            #expect((unfinished["stoppedBeforePhase"] as? Int ?? 0) > 2, "\(unfinished)")
            let text = try run(["status"])
            #expect(text.stdoutLines.contains { $0.hasPrefix("expand unfinished: an apply --expand of 'v1' -> 'v2' stopped before phase") }, "\(text)")
            #expect(text.stdout.contains(#"'v1' is served in "shop@v1" (views); 'v2' is not served yet"#), "\(text)")
            #expect(text.stdout.contains("none blocks apply --expand, which continues it"), "\(text)")
            #expect(text.stdout.contains("apply --expand --to 'v2' continues it; rollback --model PATH --store shop undoes it"), "\(text)")
            // The drift from v1's contract is the run's own: a migration is due, not an error.
            #expect(try run(["status", "--check"]).exitCode == 2)

            // Without the model, rollback cannot know the run's step (UnfinishedExpandRollbackCommandTests rolls it back).
            let rollback = try run(["rollback"], model: false)
            #expect(rollback.exitCode == 1, "\(rollback)")
            #expect(rollback.stderr.contains("an apply --expand of 'v1' -> 'v2' stopped before its switch-over; rollback needs the model") && rollback.stderr.contains("nothing was changed"), "\(rollback)")
            #expect(try connection.execute(#"SELECT count(*) AS n FROM "shop@v1".recipe"#).int(0, "n") == 50)

            // fleet status counts it in progress, and says which version its views serve.
            let fleet = try FleetFixture.writeFleet(servers: [("s1", url, ["shop"])])
            let survey = try FleetFixture.run(["fleet", "status", "--fleet", fleet, "--model", model, "--format", "json"])
            let listed = try #require(try jsonObject(survey.stdout)["stores"] as? [[String: Any]], "\(survey)")
            #expect(listed.first?["status"] as? String == "inProgress", "\(survey)")
            #expect((listed.first?["detail"] as? String)?.contains(#"(an apply --expand: 'v1' served in "shop@v1" until it is run again)"#) == true, "\(survey)")

            // apply --expand again continues; status then lists the live versions instead.
            #expect(try run(["apply", "--expand", "--to", "v2"]).exitCode == 0)
            let after = try jsonObject(try run(["status", "--format", "json"]).stdout)
            #expect(after["unfinishedExpand"] == nil)
            #expect(after["liveVersions"] as? [[String: String]] == [["version": "v2", "schema": "shop"], ["version": "v1", "schema": "shop@v1"]])
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe WHERE rating = 3").int(0, "n") == 50)
        }
    }

    @Test("fleet rollback undoes an apply --expand stopped before its switch-over with the fleet's model: the store back at v1's layout with every row")
    func fleetRollbackUndoesAStoppedExpand() throws {
        try Self.withStoppedExpand { store in
            let fleet = try FleetFixture.writeFleet(servers: [("s1", store.url, ["shop"])])
            try store.connection.execute(#"INSERT INTO "shop@v1".recipe (_entity, name) VALUES ('Recipe', 'written meanwhile')"#)
            let dry = try FleetFixture.run(["fleet", "rollback", "--dry-run", "--format", "json", "--fleet", fleet, "--model", store.model])
            let planned = try #require(try jsonObject(dry.stdout)["stores"] as? [[String: Any]], "\(dry)")
            #expect(planned.map { "\($0["store"]!) \($0["outcome"]!)" } == ["shop dryRun"], "\(dry)")
            #expect(try store.connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'shop@v1'").int(0, "n") == 1)

            let rolled = try FleetFixture.run(["fleet", "rollback", "--fleet", fleet, "--model", store.model])
            #expect(rolled.exitCode == 0 && rolled.stdout.contains("s1/shop:"), "\(rolled)")
            #expect(try store.connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'shop@v1'").int(0, "n") == 0)
            #expect(try store.connection.execute("SELECT count(*) AS n FROM shop.recipe WHERE name LIKE 'r%' OR name = 'written meanwhile'").int(0, "n") == 51)
            let status = try jsonObject(try store.run(["status", "--format", "json"]).stdout)
            #expect(status["unfinishedExpand"] == nil && status["storeVersion"] as? String == "v1" && (status["drift"] as? [Any])?.isEmpty == true, "\(status)")
            #expect(try store.run(["status", "--check"]).exitCode == 2)
            let again = try FleetFixture.run(["fleet", "rollback", "--fleet", fleet, "--model", store.model])
            #expect(again.exitCode == 0 && again.stdout.contains("nothing to roll back"), "\(again)")
        }
    }
}
