import Foundation
import PostgresClient
import Testing
import TestSupport

/// `plan` and `status` on a read-only streaming standby (`pg_basebackup -R`): a DBA asks a
/// replica what version its store is at. The drift check builds its contract as temporary
/// tables, which a standby refuses ("cannot execute CREATE TABLE in a read-only
/// transaction"); `plan` failed on that. The drift is then not checked, and says why: the
/// standby replays the primary's catalog, where it is checked.
@Suite("Plan and status on a read-only standby", .serialized, containers)
struct StandbyReadTests {
    @Test("plan and status on a streaming standby name the store's version and say the drift is checked on the primary")
    func planAndStatusReadAStandby() throws {
        try Topology.withPrimaryAndStandby { primary, standby in
            try Pipeline.benchAtVersionOne(try primary.url())
            let standbyURL = try standby.url()
            #expect(Topology.waitFor("Bench 1", query: "SELECT version_name FROM orchestrator.stores WHERE store = 'recipes'", on: standbyURL) == "Bench 1")
            let store = ["--model", "bench/model", "--store", "recipes"]

            let plan = try OrchestratorBinary.run(["plan"] + store, databaseURL: standbyURL)
            #expect(plan.exitCode == 0, "\(plan)")
            #expect(plan.stdout.contains("Bench 1") && plan.stdout.contains("Bench 2"), "\(plan)")

            let status = try OrchestratorBinary.run(["status"] + store, databaseURL: standbyURL)
            #expect(status.stdout.contains("at 'Bench 1'"), "\(status)")
            #expect(status.stdout.contains("drift: not checked") && status.stdout.contains("read-only"), "\(status)")
            #expect(!status.stderr.contains("CREATE TABLE"), "\(status)")

            let json = try OrchestratorBinary.run(["status", "--format", "json"] + store, databaseURL: standbyURL)
            #expect(json.stdout.contains(#""storeVersion":"Bench 1""#), "\(json)")
        }
    }
}
