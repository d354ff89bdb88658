import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Issue 23's faults on three local "servers" (databases with their own metadata): a worker
/// killed, SIGINT, a store that fails its pre-check. Every store's rows are checked.
extension FleetApplyTests {
    /// Holds the store lock of `store` on `url` (as another `apply` would): a worker that claims
    /// it waits for it, holding the claim.
    func holdStoreLock(_ store: String, url: String) throws -> PostgresConnection {
        let holder = try PostgresConnection(url: url)
        try holder.execute("SELECT pg_advisory_lock(\(PostgresConnection.advisoryLockKey(for: "orchestrator:store:" + store)))")
        return holder
    }

    /// A worker (`--jobs 1`) that has claimed s0/tenant_0_a, the first store of `run`, and waits
    /// for its store lock, held by `holder` (close it to let the worker go on); `journal` is a
    /// connection to the journal.
    func workerHoldingClaim(run: String, urls: [String], fleet: String) throws -> (worker: RunningOrchestrator, holder: PostgresConnection, journal: PostgresConnection) {
        let holder = try holdStoreLock("tenant_0_a", url: urls[0])
        let worker = try RunningOrchestrator(["fleet", "apply", "--fleet", fleet, "--run", run, "--jobs", "1", "--lock-wait", "600"], databaseURL: nil)
        let journal = try PostgresConnection(url: urls[0])
        #expect(try waitUntil(60) { try isClaimed("tenant_0_a", run: run, on: journal) }, "the worker claims tenant_0_a")
        return (worker, holder, journal)
    }

    /// Every store is at Recipes 3 with exactly the rows a single-store apply leaves.
    func expectAllMigrated(_ stores: [(url: String, store: String, from: String)]) throws {
        var references: [String: [String]] = [:]
        for (url, store, from) in stores {
            if references[from] == nil { references[from] = try FleetFixture.referenceContents(from: from) }
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            let contents = try FleetFixture.contents(of: store, on: connection).map { $0.replacingOccurrences(of: store, with: "reference") }
            #expect(contents == references[from], "\(store)")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = \(store)").value(0, "version_name") == "Recipes 3", "\(store)")
        }
    }

    @Test("a worker killed with SIGKILL while it holds a claim: its claim is taken over at once by a second worker", integration)
    func killedWorkersClaimIsTakenOver() throws {
        try withFleet { urls, fleet, stores in
            let (killed, holder, journal) = try workerHoldingClaim(run: "killed", urls: urls, fleet: fleet)
            defer { journal.close() }
            killed.kill()
            #expect(try killed.finish().exitCode != 0)
            holder.close()

            let second = try RunningOrchestrator(["fleet", "apply", "--fleet", fleet, "--run", "killed"], databaseURL: nil).finish(killingAfter: 120)
            #expect(second.exitCode == 0, "\(second)")
            let rows = try journal.execute("SELECT outcome, attempts::text FROM orchestrator_fleet.stores WHERE run = 'killed' ORDER BY position").rows
            #expect(rows.map { $0[0] } == Array(repeating: "migrated", count: 6), "\(rows)")
            // The killed worker's claim was never recorded: the store was tried once, by the second.
            #expect(rows.first?[1] == "1", "\(rows)")
            try expectAllMigrated(stores)
        }
    }

    @Test("SIGINT: no new claims, the running store finishes, the table is printed, the exit names what is left, and a rerun finishes", integration)
    func interrupted() throws {
        try withFleet { urls, fleet, stores in
            let (worker, holder, journal) = try workerHoldingClaim(run: "stopped", urls: urls, fleet: fleet)
            defer { journal.close() }
            #expect(kill(worker.processIdentifier, SIGINT) == 0)
            Thread.sleep(forTimeInterval: 0.5)
            holder.close()
            let result = try worker.finish(killingAfter: 120)
            #expect(result.exitCode == 1, "\(result)")
            #expect(result.stderr.contains("interrupted: no new stores are claimed; the running ones finish"), "\(result)")
            #expect(result.stdout.contains("s0      tenant_0_a  Recipes 1  Recipes 3  migrated"), "\(result)")
            #expect(result.stdoutLines.last == "run stopped: 6 stores: 1 migrated, 5 unreached", "\(result)")
            #expect(result.stderr.contains("5 stores did not reach 'Recipes 3': s0/tenant_0_b, s1/tenant_1_a, s1/tenant_1_b, s2/tenant_2_a, s2/tenant_2_b; rerun with --run stopped"), "\(result)")
            let rows = try journal.execute("SELECT store, outcome FROM orchestrator_fleet.stores WHERE run = 'stopped' ORDER BY position").rows
            #expect(rows.map { $0[1] } == ["migrated", nil, nil, nil, nil, nil], "\(rows)")
            for (url, store, _) in stores.dropFirst() {
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = \(store)").value(0, "version_name") != "Recipes 3")
            }

            let rerun = try FleetFixture.run(["fleet", "apply", "--fleet", fleet, "--run", "stopped"])
            #expect(rerun.exitCode == 0, "\(rerun)")
            #expect(try journal.execute("SELECT count(*) AS n FROM orchestrator_fleet.stores WHERE run = 'stopped' AND outcome = 'migrated'").int(0, "n") == 6)
            try expectAllMigrated(stores)
        }
    }

    @Test("a store that fails its pre-check (drift) is reported with the check's error; the others are migrated", integration)
    func preCheckFailure() throws {
        try withFleet { urls, fleet, stores in
            let connection = try PostgresConnection(url: urls[1])
            defer { connection.close() }
            try connection.execute("ALTER TABLE tenant_1_b.ingredient DROP COLUMN name")
            let before = try FleetFixture.contents(of: "tenant_1_b", on: connection)

            let result = try FleetFixture.run(["fleet", "apply", "--fleet", fleet, "--run", "checked", "--format", "json"])
            #expect(result.exitCode == 1, "\(result)")
            #expect(result.stderr.contains("1 store did not reach 'Recipes 3': s1/tenant_1_b; rerun with --run checked"), "\(result)")
            let events = result.stdoutLines.compactMap { try? jsonObject($0) }
            let failed = try #require(events.first { $0["event"] as? String == "store" && $0["outcome"] as? String == "failed" })
            #expect(failed["store"] as? String == "tenant_1_b")
            #expect((failed["error"] as? String)?.contains("ingredient.name") == true, "\(failed)")
            let journal = try PostgresConnection(url: urls[0])
            defer { journal.close() }
            let error = try journal.execute("SELECT error FROM orchestrator_fleet.stores WHERE run = 'checked' AND store = 'tenant_1_b'").value(0, "error")
            #expect(error == failed["error"] as? String)
            #expect(try FleetFixture.contents(of: "tenant_1_b", on: connection) == before)
            try expectAllMigrated(stores.filter { $0.store != "tenant_1_b" })
        }
    }
}
