import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// Workers that stop answering, waits that end, and the per-server bound over all workers.
extension FleetApplyTests {
    /// Polls `condition` until it holds or `seconds` run out.
    func waitUntil(_ seconds: TimeInterval, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return try condition()
    }

    /// True when the journal row of `store` exists and a worker holds it: its row locked by a
    /// transaction (xmax set), looked at without taking any lock (a probe that locked the row
    /// would make the worker skip it).
    func isClaimed(_ store: String, run: String, on journal: PostgresConnection) throws -> Bool {
        let tables = try journal.execute("SELECT to_regclass('orchestrator_fleet.stores') IS NOT NULL AS made")
        guard tables.bool(0, "made") == true else { return false }
        let row = try journal.execute("""
            SELECT xmax::text <> '0' AS locked FROM orchestrator_fleet.stores WHERE run = \(run) AND store = \(store) AND outcome IS NULL
            """)
        return !row.isEmpty && row.bool(0, "locked") == true
    }

    @Test("a worker frozen (SIGSTOP) while it holds a claim loses it after claimTimeout, and another worker takes the store over", integration)
    func frozenWorkersClaimIsTakenOver() throws {
        let reference = try FleetFixture.referenceContents(from: "Recipes 1")
        try withFleet(extra: "claimTimeout: 2\n") { urls, fleet, _ in
            // The first worker claims s0/tenant_0_a and waits for its store lock, holding the claim.
            let (frozen, holder, journal) = try workerHoldingClaim(run: "frozen", urls: urls, fleet: fleet)
            defer {
                frozen.kill()
                _ = try? frozen.finish()
                journal.close()
            }
            #expect(kill(frozen.processIdentifier, SIGSTOP) == 0)
            holder.close()

            let started = Date()
            let other = try RunningOrchestrator(["fleet", "apply", "--fleet", fleet, "--run", "frozen", "--jobs", "2"], databaseURL: nil)
            let result = try other.finish(killingAfter: 120)
            #expect(result.exitCode == 0, "\(result)")
            #expect(Date().timeIntervalSince(started) < 100)
            let rows = try journal.execute("SELECT store, outcome, worker FROM orchestrator_fleet.stores WHERE run = 'frozen' ORDER BY position").rows
            #expect(rows.map { $0[1] } == Array(repeating: "migrated", count: 6), "\(rows)")
            #expect(rows.first?[2]?.hasSuffix(":\(other.processIdentifier)") == true, "\(rows)")
            let store = try PostgresConnection(url: urls[0])
            defer { store.close() }
            let contents = try FleetFixture.contents(of: "tenant_0_a", on: store).map { $0.replacingOccurrences(of: "tenant_0_a", with: "reference") }
            #expect(contents == reference)
            #expect(try store.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'tenant_0_a'").value(0, "version_name") == "Recipes 3")
        }
    }

    @Test("a worker waiting for stores another live worker holds gives up after waveWait, naming them", integration)
    func waveWaitIsBounded() throws {
        try withFleet(extra: "waveWait: 3\n") { urls, fleet, _ in
            #expect(try FleetFixture.run(["fleet", "apply", "--fleet", fleet, "--run", "held"]).exitCode == 0)
            // A live worker's claim that never ends: the row locked in an open transaction of a
            // session that answers.
            let worker = try PostgresConnection(url: urls[0])
            defer { worker.close() }
            try worker.execute("UPDATE orchestrator_fleet.stores SET outcome = NULL WHERE run = 'held' AND store = 'tenant_1_b'")
            try worker.execute("BEGIN")
            try worker.execute("SELECT 1 FROM orchestrator_fleet.stores WHERE run = 'held' AND store = 'tenant_1_b' FOR UPDATE")

            let started = Date()
            let result = try RunningOrchestrator(["fleet", "apply", "--fleet", fleet, "--run", "held"], databaseURL: nil).finish(killingAfter: 60)
            let elapsed = Date().timeIntervalSince(started)
            #expect(result.exitCode == 1, "\(result)")
            #expect(elapsed >= 3 && elapsed < 45, "ended after \(elapsed) s")
            #expect(result.stderr.contains("note: waiting for 1 store (s1/tenant_1_b) of wave 'all', claimed by other workers (at most 3 s without one finishing: waveWait)"), "\(result)")
            #expect(result.stderr.contains("error: gave up after waiting 3 s (waveWait) for 1 store (s1/tenant_1_b) of wave 'all'"), "\(result)")
            #expect(result.stderr.contains("rerun with --run held"), "\(result)")
            try worker.execute("ROLLBACK")
        }
    }

    @Test("perServerJobs bounds the stores migrated at once on a server over every worker of the run", integration)
    func perServerJobsOverAllWorkers() throws {
        try FleetFixture.withServers(3) { urls in
            for (index, url) in urls.enumerated() {
                try FleetFixture.makeStores((1...4).map { "t\(index)_\($0)" }, at: "Recipes 1", url: url)
            }
            let fleet = try FleetFixture.writeFleet(servers: urls.enumerated().map { ("s\($0.offset)", $0.element, nil) }, extra: "perServerJobs: 1\n")
            let workers = try (1...2).map { _ in
                try RunningOrchestrator(["fleet", "apply", "--fleet", fleet, "--run", "bounded", "--jobs", "4"], databaseURL: nil)
            }
            for result in try workers.map({ try $0.finish(killingAfter: 240) }) { #expect(result.exitCode == 0, "\(result)") }
            for url in urls {
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                // Steps of two stores of one server that ran at the same time.
                let overlapping = try connection.execute("""
                    SELECT a.store || ' and ' || b.store AS pair FROM orchestrator.migrations a JOIN orchestrator.migrations b
                      ON a.id < b.id AND a.kind <> 'create' AND b.kind <> 'create' AND a.store <> b.store
                     AND a.started_at < b.finished_at AND b.started_at < a.finished_at
                    """)
                #expect(overlapping.rows.isEmpty, "\(overlapping.rows)")
                #expect(try connection.execute("SELECT count(*) AS n FROM orchestrator.migrations WHERE kind <> 'create' AND outcome = 'succeeded'").int(0, "n") == 4)
            }
        }
    }
}
