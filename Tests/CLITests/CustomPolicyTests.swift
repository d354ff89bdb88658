import Foundation
import PostgresClient
import Testing
import TestSupport

/// docs/custom-policies.md, run: the plain executable refuses a mapping model naming a policy
/// it does not have; the example executable that registers it runs the migration.
@Suite("custom policies")
struct CustomPolicyTests {
    @Test("a policy registered by the user's own executable splits Person into Person + Address", integration)
    func theExampleExecutableRunsThePolicyThePlainOneRefuses() throws {
        try TestDatabase.withFreshDatabase { url in
            let create = try OrchestratorBinary.run(["apply", "--model", "Examples/people", "--to", "People 1"], databaseURL: url)
            #expect(create.exitCode == 0, "\(create)")
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try connection.execute("""
                INSERT INTO people.person (name, street, city)
                SELECT 'person ' || i, 'street ' || (i % 7), CASE WHEN i % 10 = 0 THEN NULL ELSE 'city ' || (i % 2) END
                FROM generate_series(1, 100) AS i
                """)
            let before = try connection.execute("SELECT name, street, city FROM people.person ORDER BY name").rows

            let refused = try OrchestratorBinary.run(["plan", "--model", "Examples/people"], databaseURL: url)
            #expect(refused.exitCode == 0, "plan reports the blocker: \(refused)")
            #expect(refused.stdout.contains("custom policy 'PersonSplit' is not registered"), "\(refused)")
            let refusedApply = try OrchestratorBinary.run(["apply", "--model", "Examples/people"], databaseURL: url)
            #expect(refusedApply.exitCode == 1, "\(refusedApply)")
            #expect(refusedApply.stderr.contains("entity mapping PersonToPerson: custom policy 'PersonSplit' is not registered"), "\(refusedApply)")

            let plan = try OrchestratorBinary.run(["plan", "--model", "Examples/people", "--format", "json"], databaseURL: url, executable: "orchestrator-with-policies")
            let steps = try #require(try jsonObject(plan.stdout)["steps"] as? [[String: Any]], "\(plan)")
            let passes = try #require(steps.first?["passes"] as? [[String: Any]], "\(plan)")
            #expect(passes.map { $0["execution"] as? String } == ["setBased", "streaming", "streaming", "setBased"], "\(plan)")
            #expect(passes[1]["policy"] as? String == "PersonSplit", "\(plan)")
            // A policy in the step may write any table: no pass runs in parts.
            #expect(passes.map { $0["inParts"] as? Bool } == [false, false, false, false], "\(plan)")

            let apply = try OrchestratorBinary.run(["apply", "--model", "Examples/people"], databaseURL: url, executable: "orchestrator-with-policies")
            #expect(apply.exitCode == 0, "\(apply)")
            let after = try connection.execute("""
                SELECT p.name, a.street, a.city FROM people.person p LEFT JOIN people.address a ON a._pk = p.address_pk ORDER BY p.name
                """).rows
            #expect(after == before)
            // 7 streets x (2 cities + no city), each pair once.
            #expect(try connection.execute("SELECT count(*) AS n FROM people.address").int(0, "n") == 21)
            #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'people'").value(0, "version_name") == "People 2")
        }
    }

    @Test("plan --online shows that a policy declaring no hooks runs again whole under the write guard; apply --online runs it", integration)
    func theExamplePolicyRunsOnlineWholeUnderTheWriteGuard() throws {
        try TestDatabase.withFreshDatabase { url in
            #expect(try OrchestratorBinary.run(["apply", "--model", "Examples/people", "--to", "People 1"], databaseURL: url).exitCode == 0)
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try connection.execute("""
                INSERT INTO people.person (name, street, city) SELECT 'person ' || i, 'street ' || (i % 7), 'city ' || (i % 2) FROM generate_series(1, 100) AS i
                """)
            let before = try connection.execute("SELECT name, street, city FROM people.person ORDER BY name").rows

            let plan = try OrchestratorBinary.run(["plan", "--online", "--model", "Examples/people"], databaseURL: url, executable: "orchestrator-with-policies")
            #expect(plan.exitCode == 0, "\(plan)")
            let lines = plan.stdout.split(separator: "\n").map(String.init)
            let guardPhase = try #require(lines.firstIndex { $0.contains("write guard on people.person, then the last catch-up round with PersonToPerson through policy 'PersonSplit' run again whole") }, "\(plan)")
            #expect(lines[guardPhase + 1].hasPrefix("       SHARE, "), "\(plan)")
            #expect(lines[guardPhase + 1].contains("plus every row PersonToPerson maps (") && lines[guardPhase + 1].contains("this grows with those rows; writes wait"), "\(plan)")

            let apply = try OrchestratorBinary.run(["apply", "--online", "--model", "Examples/people"], databaseURL: url, executable: "orchestrator-with-policies")
            #expect(apply.exitCode == 0, "\(apply)")
            #expect(try connection.execute("""
                SELECT p.name, a.street, a.city FROM people.person p LEFT JOIN people.address a ON a._pk = p.address_pk ORDER BY p.name
                """).rows == before)
            #expect(try connection.execute("SELECT count(*) AS n FROM people.address").int(0, "n") == 14)
        }
    }
}
