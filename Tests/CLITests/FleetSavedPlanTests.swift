import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// `fleet apply --plan FILE`: the saved fleet plan runs only on stores whose own plan, made
/// under their lock, is their cohort's.
extension FleetApplyTests {
    @Test("apply --plan runs each store whose plan is its cohort's and refuses, naming the difference, the one that changed since", integration)
    func savedFleetPlan() throws {
        try withFleet { urls, fleet, stores in
            let out = URL(fileURLWithPath: fleet).deletingLastPathComponent().appendingPathComponent("fleet-plan.json").path
            let plan = try FleetFixture.run(["fleet", "plan", "--fleet", fleet, "--out", out])
            #expect(plan.exitCode == 0, "\(plan)")
            let document = try jsonObject(try String(contentsOfFile: out, encoding: .utf8))
            let cohorts = try #require(document["cohorts"] as? [[String: Any]])
            #expect(cohorts.count == 2)
            #expect(cohorts.allSatisfy { $0["savedPlan"] is [String: Any] }, "\(cohorts)")

            // Since the plan was saved, one store of the first cohort moved on by itself.
            let moved = try OrchestratorBinary.run(["apply", "--model", "migrations", "--store", "tenant_1_a", "--to", "Recipes 2"], databaseURL: urls[1])
            #expect(moved.exitCode == 0, "\(moved)")
            let connection = try PostgresConnection(url: urls[1])
            defer { connection.close() }
            let before = try FleetFixture.contents(of: "tenant_1_a", on: connection)

            let apply = try FleetFixture.run(["fleet", "apply", "--fleet", fleet, "--run", "saved", "--plan", out, "--format", "json"])
            #expect(apply.exitCode == 1, "\(apply)")
            #expect(apply.stderr.contains("1 store did not reach 'Recipes 3': s1/tenant_1_a; rerun with --run saved"), "\(apply)")
            let events = apply.stdoutLines.compactMap { try? jsonObject($0) }
            let refused = try #require(events.first { $0["event"] as? String == "store" && $0["outcome"] as? String == "failed" })
            let error = refused["error"] as? String ?? ""
            #expect(refused["store"] as? String == "tenant_1_a")
            #expect(error.contains("store tenant_1_a's plan is not its cohort's (planned on s0/tenant_0_a, saved in \(out))"), "\(error)")
            #expect(error.contains("'Recipes 2'"), "\(error)")
            #expect(error.contains("nothing was changed"), "\(error)")
            #expect(try FleetFixture.contents(of: "tenant_1_a", on: connection) == before)
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'tenant_1_a'").value(0, "version_name") == "Recipes 2")
            try expectAllMigrated(stores.filter { $0.store != "tenant_1_a" })
        }
    }
}

extension FleetApplyTests {
    @Test("fleet plan --online --out saves the online mode, and fleet apply --online --plan runs it on every store", integration)
    func savedOnlineFleetPlan() throws {
        try withFleet { _, fleet, stores in
            let out = URL(fileURLWithPath: fleet).deletingLastPathComponent().appendingPathComponent("online-plan.json").path
            let plan = try FleetFixture.run(["fleet", "plan", "--online", "--fleet", fleet, "--out", out])
            #expect(plan.exitCode == 0 && plan.stdout.contains("apply --online:"), "\(plan)")
            let document = try jsonObject(try String(contentsOfFile: out, encoding: .utf8))
            #expect(document["mode"] as? String == "online")
            let cohorts = try #require(document["cohorts"] as? [[String: Any]])
            #expect(cohorts.allSatisfy { ($0["phaseDigests"] as? [Any])?.count == ($0["plan"] as? [String: Any]).flatMap { ($0["steps"] as? [Any])?.count } }, "\(cohorts)")
            let apply = try FleetFixture.run(["fleet", "apply", "--online", "--fleet", fleet, "--run", "online-saved", "--plan", out])
            #expect(apply.exitCode == 0, "\(apply)")
            try expectAllMigrated(stores)
        }
    }
}
