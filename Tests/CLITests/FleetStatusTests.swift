import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

@Suite("fleet status and plan")
struct FleetStatusTests {
    @Test("status reads every store of three servers and reports the one that cannot be reached, without its password", integration)
    func statusAcrossServers() throws {
        try FleetFixture.withServers(3) { urls in
            try FleetFixture.makeStores(["tenant_a", "tenant_b"], at: "Recipes 3", url: urls[0])
            try FleetFixture.makeStores(["tenant_c", "tenant_d"], at: "Recipes 1", url: urls[1])
            try FleetFixture.makeStores(["tenant_e"], at: "Recipes 2", url: urls[2])
            try FleetFixture.makeStores(["tenant_f"], at: "Recipes 3", url: urls[2])
            let connection = try PostgresConnection(url: urls[2])
            defer { connection.close() }
            try connection.execute("ALTER TABLE tenant_f.recipe DROP COLUMN rating")
            let fleet = try FleetFixture.writeFleet(servers: [
                ("eu-1", urls[0], nil), ("eu-2", urls[1], ["tenant_*", "tenant_new"]), ("us-1", urls[2], nil),
                ("down", FleetFixture.unreachableURL, nil),
            ])

            let json = try FleetFixture.run(["fleet", "status", "--fleet", fleet, "--format", "json"])
            #expect(json.exitCode == 0, "\(json)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let stores = try #require(document["stores"] as? [[String: Any]])
            let seen = stores.map { "\($0["server"]!)/\($0["store"]!) \($0["version"] as? String ?? "-") \($0["status"]!)" }
            #expect(seen == [
                "eu-1/tenant_a Recipes 3 upToDate", "eu-1/tenant_b Recipes 3 upToDate",
                "eu-2/tenant_c Recipes 1 migrationRequired", "eu-2/tenant_d Recipes 1 migrationRequired", "eu-2/tenant_new - missing",
                "us-1/tenant_e Recipes 2 migrationRequired", "us-1/tenant_f Recipes 3 drifted",
                "down/* - unreachable",
            ])
            let summary = try #require(document["summary"] as? [String: Any])
            #expect(summary["stores"] as? Int == 8)
            #expect(!json.stdout.contains("hunter2secret") && !json.stderr.contains("hunter2secret"))

            let text = try FleetFixture.run(["fleet", "status", "--fleet", fleet, "--check"])
            #expect(text.exitCode == 1, "\(text)")
            #expect(text.stdoutLines.contains("status: 2 upToDate, 3 migrationRequired, 1 missing, 1 drifted, 1 unreachable"), "\(text)")
            #expect(text.stdoutLines.contains("  eu-2: 2 migrationRequired, 1 missing"), "\(text)")
            #expect(text.stdout.contains("us-1/tenant_f: drifted: missing column recipe.rating"), "\(text)")
            #expect(!text.stdout.contains("hunter2secret") && !text.stderr.contains("hunter2secret"))
        }
    }

    @Test("status --check exits 2 when stores need a migration and 0 once all are up to date", integration)
    func checkExitCodes() throws {
        try FleetFixture.withServers(3) { urls in
            for (index, url) in urls.enumerated() { try FleetFixture.makeStores(["t\(index)"], at: index == 0 ? "Recipes 1" : "Recipes 3", url: url) }
            let fleet = try FleetFixture.writeFleet(servers: urls.enumerated().map { ("s\($0.offset)", $0.element, nil) })
            #expect(try FleetFixture.run(["fleet", "status", "--fleet", fleet, "--check"]).exitCode == 2)
            let apply = try FleetFixture.run(["fleet", "apply", "--fleet", fleet])
            #expect(apply.exitCode == 0, "\(apply)")
            let check = try FleetFixture.run(["fleet", "status", "--fleet", fleet, "--check"])
            #expect(check.exitCode == 0, "\(check)")
        }
    }

    @Test("plan groups the stores into cohorts by version and plans each cohort once", integration)
    func planCohorts() throws {
        try FleetFixture.withServers(3) { urls in
            try FleetFixture.makeStores(["t1", "t2"], at: "Recipes 1", url: urls[0])
            try FleetFixture.makeStores(["t3"], at: "Recipes 1", url: urls[1])
            try FleetFixture.makeStores(["t4"], at: "Recipes 2", url: urls[2])
            let fleet = try FleetFixture.writeFleet(servers: urls.enumerated().map { ("s\($0.offset)", $0.element, nil) })
            let out = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-plan-\(UUID().uuidString).json").path
            let plan = try FleetFixture.run(["fleet", "plan", "--fleet", fleet, "--out", out])
            #expect(plan.exitCode == 0, "\(plan)")
            #expect(plan.stdoutLines.first == "fleet plan: 4 stores to bring to 'Recipes 3' in 2 cohorts", "\(plan)")
            #expect(plan.stdout.contains("cohort 1 of 2: 3 stores at 'Recipes 1'"), "\(plan)")
            #expect(plan.stdout.contains("cohort 2 of 2: 1 store at 'Recipes 2'"), "\(plan)")
            let saved = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any])
            let cohorts = try #require(saved["cohorts"] as? [[String: Any]])
            #expect(cohorts.map { $0["storeCount"] as? Int } == [3, 1])
            #expect(cohorts.map { $0["stores"] as? [String] } == [["s0/t1", "s0/t2", "s1/t3"], ["s2/t4"]])
        }
    }
}
