import Foundation
import PostgresClient
import Testing
import TestSupport

/// `apply --expand` of a heavyweight step as a user runs it (docs/rolling-deploys-heavyweight.md):
/// `plan --expand` says what each release can do, the run waits for `complete` while `status`
/// lists the new version read-only, a plain `apply` is refused meanwhile, and `complete` lets
/// the run switch over.
@Suite(integration) struct HeavyweightExpandCommandTests {
    @Test func applyExpandServesTheNewVersionReadOnlyUntilCompleteLetsTheRunSwitchOver() throws {
        try withAppliedStore { folder, url, connection in
            func run(_ arguments: [String]) throws -> CLIResult {
                try OrchestratorBinary.run(arguments + ["--model", folder.path, "--store", "kitchen"], databaseURL: url)
            }
            try connection.execute("INSERT INTO kitchen.chef (_entity, name) VALUES ('Chef', 'ada')")
            try connection.execute("INSERT INTO kitchen.recipe (_entity, name, temperature, amount, chef_pk) SELECT 'Recipe', 'soup', 212, 3, _pk FROM kitchen.chef")

            let plan = try run(["plan", "--expand"])
            #expect(plan.exitCode == 0, "\(plan)")
            #expect(plan.stdoutLines.contains(#"apply --expand: 'Kitchen 1' stays live in kitchen, read and written as always; 'Kitchen 2' is served read-only in "kitchen@Kitchen_2""#), "\(plan)")
            let json = try jsonObject(try run(["plan", "--expand", "--format", "json"]).stdout)
            let expansion = try #require(json["expansion"] as? [String: Any], "\(json)")
            #expect(expansion["viewsSchema"] as? String == "kitchen@Kitchen_2" && expansion["readOnly"] as? Bool == true)

            // A saved plan runs as planned (its mode checked, as every saved plan's).
            let saved = folder.appendingPathComponent("plan.json").path
            #expect(try run(["plan", "--expand", "--out", saved]).exitCode == 0)
            let modes = try run(["apply", "--online", "--plan", saved])
            #expect(modes.exitCode == 1 && modes.stderr.contains("saved for apply --expand, now apply --online"), "\(modes)")
            let running = try RunningOrchestrator(
                ["apply", "--expand", "--plan", saved, "--model", folder.path, "--store", "kitchen", "--format", "json"], databaseURL: url
            )
            defer { if running.isRunning { running.kill() } }
            #expect(running.waitForOutput(containing: "waiting for orchestrator complete --store kitchen"), "the run never waited for complete")
            let status = try jsonObject(try run(["status", "--format", "json"]).stdout)
            let live = status["liveVersions"] as? [[String: Any]]
            #expect(live?.map { $0["version"] as? String } == ["Kitchen 1", "Kitchen 2"] && live?.map { $0["schema"] as? String } == ["kitchen", "kitchen@Kitchen_2"], "\(status)")
            #expect(live?.last?["readOnly"] as? Bool == true, "\(status)")
            #expect(try connection.execute(#"SELECT name, temperature_c FROM "kitchen@Kitchen_2".recipe"#).rows == [["soup", "100"]])
            // The views are the new version's contract meanwhile: one dropped by hand is blocking drift.
            // (exit 2: the store is at Kitchen 1, a migration needed; nothing drifted.)
            let check = try run(["status", "--check"])
            #expect(check.exitCode == 2, "\(check)")
            // fleet status judges the views against the version they serve, the new one, as status does.
            let fleet = try FleetFixture.writeFleet(servers: [("s1", url, ["kitchen"])])
            let fleetStatus = try FleetFixture.run(["fleet", "status", "--format", "json", "--fleet", fleet, "--model", folder.path])
            let listed = try #require(try jsonObject(fleetStatus.stdout)["stores"] as? [[String: Any]], "\(fleetStatus)")
            #expect(listed.count == 1 && listed.first?["status"] as? String != "drifted", "\(fleetStatus)")
            let fleetLive = listed.first?["liveVersions"] as? [[String: Any]]
            #expect(fleetLive?.map { $0["version"] as? String } == ["Kitchen 1", "Kitchen 2"] && fleetLive?.last?["readOnly"] as? Bool == true, "\(fleetStatus)")
            let fleetText = try FleetFixture.run(["fleet", "status", "--fleet", fleet, "--model", folder.path])
            #expect(fleetText.stdout.contains(#"s1/kitchen: 'Kitchen 2' served read-only in "kitchen@Kitchen_2" beside 'Kitchen 1'"#), "\(fleetText)")
            try connection.execute(#"DROP VIEW "kitchen@Kitchen_2".chef"#)
            let drifted = try run(["status", "--check", "--format", "json"])
            #expect(drifted.exitCode == 1 && drifted.stdout.contains(#""kitchen@Kitchen_2.chef""#), "\(drifted)")

            let blocked = try run(["apply"])
            #expect(blocked.exitCode == 1 && blocked.stderr.contains("an apply --expand of the same step continues it"), "\(blocked)")

            let complete = try OrchestratorBinary.run(["complete", "--store", "kitchen", "--format", "json"], databaseURL: url)
            #expect(complete.exitCode == 0, "\(complete)")
            let report = try jsonObject(complete.stdout)
            #expect(report["switchedOver"] as? Bool == true && report["droppedSchema"] as? String == "kitchen@Kitchen_2", "\(complete)")
            let finished = try running.finish()
            #expect(finished.exitCode == 0, "\(finished)")
            #expect(try connection.execute("SELECT name, temperature_c, total_cost FROM kitchen.recipe").rows == [["soup", "100", "3"]])
            let kinds = try connection.execute("SELECT kind FROM orchestrator.migrations WHERE store = 'kitchen' ORDER BY id").rows.map { $0[0] ?? "" }
            #expect(kinds.suffix(3) == ["expand", "complete", "heavyweight"])
        }
    }

    @Test("a run gone while it waited for complete: fleet status judges its views against the new version they serve, never drifted")
    func fleetStatusOfAnExpansionWhoseRunIsGone() throws {
        try withAppliedStore { folder, url, connection in
            try connection.execute("INSERT INTO kitchen.recipe (_entity, name, temperature, amount) VALUES ('Recipe', 'soup', 212, 3)")
            let running = try RunningOrchestrator(["apply", "--expand", "--model", folder.path, "--store", "kitchen", "--format", "json"], databaseURL: url)
            defer { if running.isRunning { running.kill() } }
            try #require(running.waitForOutput(containing: "waiting for orchestrator complete --store kitchen"), "the run never waited for complete")
            running.kill()
            _ = try running.finish()
            // Its session ends once the server sees the client gone; then the store's lock is free.
            let deadline = Date().addingTimeInterval(30)
            while try connection.execute("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted").int(0, "n") != 0 && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
            }
            let fleet = try FleetFixture.writeFleet(servers: [("s1", url, ["kitchen"])])
            let status = try FleetFixture.run(["fleet", "status", "--format", "json", "--fleet", fleet, "--model", folder.path])
            let listed = try #require(try jsonObject(status.stdout)["stores"] as? [[String: Any]], "\(status)")
            #expect(listed.map { $0["status"] as? String } == ["migrationRequired"], "\(status)")
            // A view dropped by hand is drift, judged as status judges it.
            try connection.execute(#"DROP VIEW "kitchen@Kitchen_2".chef"#)
            let drifted = try FleetFixture.run(["fleet", "status", "--format", "json", "--fleet", fleet, "--model", folder.path])
            let after = try #require(try jsonObject(drifted.stdout)["stores"] as? [[String: Any]], "\(drifted)")
            #expect(after.map { $0["status"] as? String } == ["drifted"] && drifted.stdout.contains("kitchen@Kitchen_2.chef"), "\(drifted)")
        }
    }

    @Test("with a reverse mapping model beside the model, the new version is written through its views: plan and status say so, the old release reads the writes, complete keeps them")
    func aReverseMappingModelMakesTheNewVersionWritable() throws {
        try withAppliedStore { folder, url, connection in
            func run(_ arguments: [String]) throws -> CLIResult {
                try OrchestratorBinary.run(arguments + ["--model", folder.path, "--store", "kitchen"], databaseURL: url)
            }
            try write(KitchenModel.reverseMapping, to: "kitchen-2-to-1.yaml", in: folder)
            try connection.execute("INSERT INTO kitchen.chef (_entity, name) VALUES ('Chef', 'ada')")
            let plan = try run(["plan", "--expand"])
            #expect(plan.exitCode == 0, "\(plan)")
            #expect(plan.stdout.contains(#"'Kitchen 2' is served written through"#) && plan.stdout.contains("kitchen-2-to-1.yaml"), "\(plan)")
            let json = try jsonObject(try run(["plan", "--expand", "--format", "json"]).stdout)
            let expansion = try #require(json["expansion"] as? [String: Any], "\(json)")
            #expect(expansion["readOnly"] as? Bool == false && expansion["writtenTables"] as? [String] == ["chef", "recipe"], "\(expansion)")
            #expect((expansion["reverseMapping"] as? String)?.hasSuffix("kitchen-2-to-1.yaml") == true && (expansion["readOnlyTables"] as? [Any])?.isEmpty == true, "\(expansion)")

            let running = try RunningOrchestrator(["apply", "--expand", "--model", folder.path, "--store", "kitchen"], databaseURL: url)
            defer { if running.isRunning { running.kill() } }
            #expect(running.waitForOutput(containing: "waiting for orchestrator complete --store kitchen"), "the run never waited for complete")
            let status = try jsonObject(try run(["status", "--format", "json"]).stdout)
            let live = status["liveVersions"] as? [[String: Any]]
            #expect(live?.last?["readOnly"] as? Bool == false && live?.last?["writtenTables"] as? [String] == ["chef", "recipe"], "\(status)")

            // The new release writes in its names; the old release reads the row in its own.
            let newRelease = try connection.reconnect()
            defer { newRelease.close() }
            try newRelease.execute(#"SET search_path = "kitchen@Kitchen_2", kitchen"#)
            try newRelease.execute("INSERT INTO recipe (name, temperature_c, total_cost, author_pk) SELECT 'tea', 100, 2, _pk FROM chef WHERE name = 'ada'")
            #expect(try newRelease.execute("SELECT name, temperature_c, total_cost FROM recipe").rows == [["tea", "100", "2"]])
            #expect(try connection.execute("SELECT r.name, r.temperature, r.amount, c.name FROM kitchen.recipe r JOIN kitchen.chef c ON c._pk = r.chef_pk").rows == [["tea", "212", "2", "ada"]])
            try newRelease.execute("RESET search_path")

            let complete = try OrchestratorBinary.run(["complete", "--store", "kitchen"], databaseURL: url)
            #expect(complete.exitCode == 0, "\(complete)")
            #expect(try running.finish().exitCode == 0)
            #expect(try connection.execute("SELECT r.name, r.temperature_c, r.total_cost, c.name FROM kitchen.recipe r JOIN kitchen.chef c ON c._pk = r.author_pk").rows == [["tea", "100", "2", "ada"]])
        }
    }
}
