import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

@Suite("fleet apply")
struct FleetApplyTests {
    /// Three servers: two stores at Recipes 1 on each of the first two, two at Recipes 2 on the third.
    func withFleet(extra: String = "", _ body: (_ urls: [String], _ fleet: String, _ stores: [(url: String, store: String, from: String)]) throws -> Void) throws {
        try FleetFixture.withServers(3) { urls in
            var stores: [(url: String, store: String, from: String)] = []
            for (index, url) in urls.enumerated() {
                let version = index == 2 ? "Recipes 2" : "Recipes 1"
                let names = ["tenant_\(index)_a", "tenant_\(index)_b"]
                try FleetFixture.makeStores(names, at: version, url: url)
                stores += names.map { (url, $0, version) }
            }
            let fleet = try FleetFixture.writeFleet(servers: urls.enumerated().map { ("s\($0.offset)", $0.element, ["tenant_*"]) }, extra: extra)
            try body(urls, fleet, stores)
        }
    }

    func journal(_ url: String, run: String) throws -> [[String?]] {
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        return try connection.execute("""
            SELECT server || '/' || store, outcome, attempts::text FROM orchestrator_fleet.stores WHERE run = \(run) ORDER BY position
            """).rows
    }

    /// A CHECK made by hand, beside the contract (an extra object is not drift), that the
    /// step's backfill of rating (NULL -> 0) breaks: the step fails, the store stays as it was.
    func breakBackfill(of store: String, on connection: PostgresConnection) throws {
        try connection.execute("ALTER TABLE \(ident: store, "recipe") ADD CONSTRAINT no_zero_rating CHECK (rating IS NULL OR rating <> 0)")
    }

    @Test("apply migrates every store of three servers, each exactly as a single-store apply does", integration)
    func applyAcrossServers() throws {
        let reference = [
            "Recipes 1": try FleetFixture.referenceContents(from: "Recipes 1"),
            "Recipes 2": try FleetFixture.referenceContents(from: "Recipes 2"),
        ]
        try withFleet { urls, fleet, stores in
            let apply = try FleetFixture.run(["fleet", "apply", "--fleet", fleet, "--run", "first", "--jobs", "3"])
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(apply.stdoutLines.first?.hasPrefix("SERVER") == true, "\(apply)")
            #expect(apply.stdoutLines.last == "run first: 6 stores: 6 migrated", "\(apply)")
            #expect(apply.stdout.contains("s2      tenant_2_b  Recipes 2  Recipes 3  migrated"), "\(apply)")
            for (url, store, from) in stores {
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                let contents = try FleetFixture.contents(of: store, on: connection).map { $0.replacingOccurrences(of: store, with: "reference") }
                #expect(contents == reference[from], "\(store)")
                let version = try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = \(store)").value(0, "version_name")
                #expect(version == "Recipes 3")
            }
            #expect(try journal(urls[0], run: "first").map { $0[1] } == Array(repeating: "migrated", count: 6))
        }
    }

    @Test("a claim's BEGIN rides with its SELECT, an outcome's UPDATE with its COMMIT: one round trip each", integration)
    func journalRoundTrips() throws {
        try withFleet { urls, fleet, _ in
            let apply = try FleetFixture.run(["fleet", "apply", "--fleet", fleet, "--run", "trips", "--jobs", "1", "--verbose"])
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(apply.stdoutLines.last == "run trips: 6 stores: 6 migrated", "\(apply)")
            let lines = apply.stderrLines
            // The statement log: `sql: 0.4 ms, 1 row: BEGIN;`, the SELECT on continuation lines.
            #expect(lines.filter { $0.hasPrefix("sql: ") && $0.hasSuffix(": BEGIN;") }.count >= 6, "\(apply)")
            #expect(lines.filter { $0.hasSuffix("'; COMMIT") }.count == 6, "\(apply)")
            #expect(try journal(urls[0], run: "trips").map { $0[1] } == Array(repeating: "migrated", count: 6))
            #expect(try journal(urls[0], run: "trips").map { $0[2] } == Array(repeating: "1", count: 6))
        }
    }

    @Test("a store whose step fails is reported with the step's error, the others go on, and the run resumed finishes it", integration)
    func failureAndResume() throws {
        try withFleet { urls, fleet, _ in
            let connection = try PostgresConnection(url: urls[1])
            defer { connection.close() }
            try breakBackfill(of: "tenant_1_a", on: connection)

            let first = try FleetFixture.run(["fleet", "apply", "--fleet", fleet, "--run", "again", "--format", "json"])
            #expect(first.exitCode == 1, "\(first)")
            #expect(first.stderr.contains("1 store did not reach 'Recipes 3': s1/tenant_1_a; rerun with --run again"), "\(first)")
            let events = first.stdoutLines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            let failed = try #require(events.first { $0["event"] as? String == "store" && $0["outcome"] as? String == "failed" })
            #expect(failed["store"] as? String == "tenant_1_a")
            #expect((failed["error"] as? String)?.contains("no_zero_rating") == true, "\(failed)")
            #expect(events.filter { $0["event"] as? String == "store" && $0["outcome"] as? String == "migrated" }.count == 5)
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'tenant_1_a'").value(0, "version_name") == "Recipes 1")

            try connection.execute("ALTER TABLE tenant_1_a.recipe DROP CONSTRAINT no_zero_rating")
            let resumed = try FleetFixture.run(["fleet", "apply", "--fleet", fleet, "--run", "again"])
            #expect(resumed.exitCode == 0, "\(resumed)")
            let rows = try journal(urls[0], run: "again")
            #expect(rows.map { $0[1] } == Array(repeating: "migrated", count: 6))
            // Only the failed store was tried again.
            #expect(rows.map { $0[2] } == ["1", "1", "2", "1", "1", "1"], "\(rows)")
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'tenant_1_a'").value(0, "version_name") == "Recipes 3")
        }
    }

    @Test("a claim held by a worker whose session dies is taken over by another worker", integration)
    func deadWorkersClaimIsTakenOver() throws {
        try withFleet { urls, fleet, _ in
            let store = try PostgresConnection(url: urls[1])
            defer { store.close() }
            try breakBackfill(of: "tenant_1_a", on: store)
            #expect(try FleetFixture.run(["fleet", "apply", "--fleet", fleet, "--run", "takeover"]).exitCode == 1)
            try store.execute("ALTER TABLE tenant_1_a.recipe DROP CONSTRAINT no_zero_rating")
            // A worker's claim, as `fleet apply` makes it: the store's row locked in an open
            // transaction of the worker's journal session.
            let worker = try PostgresConnection(url: urls[0])
            try worker.execute("UPDATE orchestrator_fleet.stores SET outcome = NULL WHERE run = 'takeover' AND store = 'tenant_1_a'")
            try worker.execute("BEGIN")
            try worker.execute("SELECT 1 FROM orchestrator_fleet.stores WHERE run = 'takeover' AND store = 'tenant_1_a' FOR UPDATE")
            let workerPID = try worker.execute("SELECT pg_backend_pid() AS pid").value(0, "pid")!

            let other = try RunningOrchestrator(["fleet", "apply", "--fleet", fleet, "--run", "takeover"], databaseURL: nil)
            Thread.sleep(forTimeInterval: 2)
            #expect(other.isRunning, "the other worker waits while the claim is held")
            let admin = try PostgresConnection(url: urls[0])
            defer { admin.close() }
            try admin.execute("SELECT pg_terminate_backend(\(workerPID)::int)")
            let result = try other.finish()
            #expect(result.exitCode == 0, "\(result)")
            let rows = try journal(urls[0], run: "takeover")
            #expect(rows.map { $0[1] } == Array(repeating: "migrated", count: 6), "\(rows)")
            #expect(try store.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'tenant_1_a'").value(0, "version_name") == "Recipes 3")
        }
    }

    @Test("a canary wave's failure stops the later waves, whose stores are skipped", integration)
    func canaryStopsWaves() throws {
        try withFleet { urls, fleet, _ in
            let connection = try PostgresConnection(url: urls[0])
            defer { connection.close() }
            try breakBackfill(of: "tenant_0_a", on: connection)
            try Data("waves:\n  - {name: canary, stores: 1}\n  - {name: rest}\n".utf8).append(toFile: fleet)
            let apply = try FleetFixture.run(["fleet", "apply", "--fleet", fleet, "--run", "canary"])
            #expect(apply.exitCode == 1, "\(apply)")
            #expect(try journal(urls[0], run: "canary").map { $0[1] } == ["failed", "skipped", "skipped", "skipped", "skipped", "skipped"])
            #expect(apply.stdoutLines.last == "run canary: 6 stores: 1 failed, 5 skipped", "\(apply)")
        }
    }

    @Test("two workers sharing a run migrate each store exactly once", integration)
    func twoWorkers() throws {
        try FleetFixture.withServers(3) { urls in
            for (index, url) in urls.enumerated() {
                try FleetFixture.makeStores((1...6).map { "t\(index)_\($0)" }, at: "Recipes 1", url: url)
            }
            let fleet = try FleetFixture.writeFleet(servers: urls.enumerated().map { ("s\($0.offset)", $0.element, nil) })
            let workers = try (1...2).map { _ in
                try RunningOrchestrator(["fleet", "apply", "--fleet", fleet, "--run", "shared", "--jobs", "2"], databaseURL: nil)
            }
            let results = try workers.map { try $0.finish() }
            for result in results { #expect(result.exitCode == 0, "\(result)") }
            let rows = try journal(urls[0], run: "shared")
            #expect(rows.count == 18)
            #expect(rows.allSatisfy { $0[1] == "migrated" && $0[2] == "1" }, "\(rows)")
            for url in urls {
                let connection = try PostgresConnection(url: url)
                defer { connection.close() }
                let history = try connection.execute("""
                    SELECT store, count(*) AS n FROM orchestrator.migrations WHERE kind <> 'create' AND outcome = 'succeeded' GROUP BY store ORDER BY store
                    """)
                #expect(history.rows.count == 6)
                #expect(history.rows.allSatisfy { $0[1] == "1" }, "\(history.rows)")
            }
        }
    }
}

extension Data {
    func append(toFile path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: self)
    }
}
