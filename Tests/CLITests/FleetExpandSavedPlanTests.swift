import Foundation
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// `fleet plan --expand --out FILE`, then `fleet apply --expand --plan FILE`: each store's
/// expansion, planned under its lock, must be its cohort's, its online phases (the previous
/// version's views) too.
extension FleetExpandTests {
    @Test("fleet apply --expand --plan runs the saved expansion on each store whose plan is its cohort's; a file of another mode is refused naming both, a cohort whose phases differ fails alone", integration)
    func savedFleetExpansion() throws {
        try Self.withShopServers(2) { urls, folder, model in
            // t_a, t_b on s1 and t_c on s2 at Shop 2 (one cohort); t_d on s2 at Shop 1 (another).
            let stores = [("t_a", 0, "Shop 2"), ("t_b", 0, "Shop 2"), ("t_c", 1, "Shop 2"), ("t_d", 1, "Shop 1")]
            let connections = try urls.map { try PostgresConnection(url: $0) }
            defer { connections.forEach { $0.close() } }
            for (store, server, version) in stores {
                #expect(try OrchestratorBinary.run(["apply", "--model", model, "--store", store, "--to", version], databaseURL: urls[server]).exitCode == 0)
                if version == "Shop 2" {
                    try connections[server].execute("INSERT INTO \(ident: store, "item") (_entity, name, sku) VALUES ('Item', 'pen', 'P-1')")
                } else {
                    try connections[server].execute("INSERT INTO \(ident: store, "item") (_entity, name) VALUES ('Item', 'pen')")
                }
            }
            let fleet = try FleetFixture.writeFleet(servers: [("s1", urls[0], ["t_*"]), ("s2", urls[1], ["t_*"])])
            let common = ["--fleet", fleet, "--model", model, "--to", "Shop 3"]
            let out = folder.appendingPathComponent("expand-plan.json").path
            let plain = folder.appendingPathComponent("plain-plan.json").path

            let plan = try FleetFixture.run(["fleet", "plan", "--expand", "--out", out] + common)
            #expect(plan.exitCode == 0, "\(plan)")
            #expect(plan.stdout.contains("apply --expand: 'Shop 2' stays live in \"t_a@Shop_2\" beside 'Shop 3' in t_a"), "\(plan)")
            #expect(plan.stdout.contains("fleet plan saved to \(out): run it with fleet apply --expand --plan \(out)"), "\(plan)")
            let document = try jsonObject(try String(contentsOfFile: out, encoding: .utf8))
            #expect(document["mode"] as? String == "expand")
            let cohorts = try #require(document["cohorts"] as? [[String: Any]])
            #expect(cohorts.map { $0["stores"] as? [String] ?? [] } == [["s1/t_a", "s1/t_b", "s2/t_c"], ["s2/t_d"]], "\(cohorts)")
            let options = cohorts.map { (($0["savedPlan"] as? [String: Any])?["fingerprints"] as? [String: Any])?["options"] as? [String: Any] }
            #expect(options.allSatisfy { $0?["expand"] as? Bool == true && $0?["online"] as? Bool == true }, "\(options)")
            #expect(cohorts.allSatisfy { ($0["phaseDigests"] as? [String])?.count == 1 }, "\(cohorts)")
            #expect(try FleetFixture.run(["fleet", "plan", "--out", plain] + common).exitCode == 0)

            // Another mode than the file's: refused before anything runs, naming both.
            for (flags, now, file) in [([String](), "fleet apply (neither --online nor --expand)", out), (["--online"], "fleet apply --online", out), (["--expand"], "fleet apply --expand", plain)] {
                let refused = try FleetFixture.run(["fleet", "apply", "--allow-data-loss", "--plan", file] + flags + common)
                let saved = file == out ? "fleet apply --expand" : "fleet apply (neither --online nor --expand)"
                #expect(refused.exitCode == 1, "\(refused)")
                #expect(refused.stderr.contains("the fleet plan \(file) was saved for \(saved), and this is \(now); nothing was changed"), "\(refused)")
            }
            #expect(try connections.map { try $0.execute("SELECT count(*) AS n FROM orchestrator.expansions").int(0, "n") } == [0, 0])

            // t_d's cohort saved with other phases than t_d's plan has now: it fails alone, unchanged.
            let original = try String(contentsOfFile: out, encoding: .utf8)
            let digest = try #require((cohorts[1]["phaseDigests"] as? [String])?.first)
            try Data(original.replacingOccurrences(of: digest, with: String(repeating: "0", count: digest.count)).utf8).write(to: URL(fileURLWithPath: out))
            let apply = try FleetFixture.run(["fleet", "apply", "--expand", "--allow-data-loss", "--plan", out, "--run", "saved-expand", "--format", "json"] + common)
            #expect(apply.exitCode == 1, "\(apply)")
            let events = apply.stdoutLines.compactMap { try? jsonObject($0) }.filter { $0["event"] as? String == "store" }
            #expect(events.map { "\($0["store"]!) \($0["outcome"]!)" }.sorted() == ["t_a migrated", "t_b migrated", "t_c migrated", "t_d failed"], "\(apply)")
            let error = events.first { $0["store"] as? String == "t_d" }?["error"] as? String ?? ""
            #expect(error.contains("store t_d's plan is not its cohort's (planned on s2/t_d, saved in \(out)): step 1: its online phases"), "\(error)")
            #expect(try connections[1].execute("SELECT version_name FROM orchestrator.stores WHERE store = 't_d'").rows == [["Shop 1"]])
            #expect(try !schemaExists("t_d@Shop_1", on: connections[1]))

            // The cohort's stores serve both versions, each in its own schema of views.
            for (store, server, _) in stores.prefix(3) {
                let connection = connections[server]
                let expansion = try connection.execute("SELECT old_version, views_schema FROM orchestrator.expansions WHERE store = \(store)")
                #expect(expansion.rows == [["Shop 2", store + "@Shop_2"]], "\(store)")
                #expect(try connection.execute("SELECT name, sku FROM \(ident: store + "@Shop_2", "item")").rows == [["pen", "P-1"]], "\(store)")
                try connection.execute("INSERT INTO \(ident: store + "@Shop_2", "item") (name, sku) VALUES ('nib', 'N-3')")
                #expect(try connection.execute("SELECT name FROM \(ident: store, "item") ORDER BY _pk").rows == [["pen"], ["nib"]], "\(store)")
            }

            // The file as saved: the rerun expands t_d too.
            try Data(original.utf8).write(to: URL(fileURLWithPath: out))
            let rerun = try FleetFixture.run(["fleet", "apply", "--expand", "--allow-data-loss", "--plan", out, "--run", "saved-expand"] + common)
            #expect(rerun.exitCode == 0, "\(rerun)")
            #expect(try connections[1].execute("SELECT old_version FROM orchestrator.expansions WHERE store = 't_d'").rows == [["Shop 1"]])
            #expect(try connections[1].execute(#"SELECT name FROM "t_d@Shop_1".item"#).rows == [["pen"]])
        }
    }
}
