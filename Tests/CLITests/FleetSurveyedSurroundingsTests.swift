@testable import Engine
import Foundation
import Planning
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// `fleet apply`'s survey reads the row estimates and the replication topology of a server's
/// stores once, with the server's replication fingerprint; under each store's lock that
/// fingerprint is read in the drift check's one statement, and a topology changed since the
/// survey is read again and acted on.
@Suite("fleet apply: row estimates and replication topology read once per server")
struct FleetSurveyedSurroundingsTests {
    /// Online (`--online`), the plan needs the stores' extra tables and columns: the survey
    /// recorded them, so under the lock the catalog is not read again either.
    @Test("the topology and the row estimates are read once per server, none of them under a store's lock; every store is migrated as apply does", integration, arguments: [false, true])
    func readOncePerServer(online: Bool) throws {
        let reference = try FleetFixture.referenceContents(from: "Recipes 1")
        // The server's replication fingerprint reads cluster-wide catalogs that other tests on
        // this server change at any moment (subscriptions, slots), and a change after the survey
        // rightly makes a store's plan read its topology again. So the reads are counted over a
        // run in which that state stayed as it was: at most three runs, one of them such a run.
        var counted = false
        for _ in 1...3 where !counted {
            try FleetFixture.withServers(2) { urls in
                for (index, url) in urls.enumerated() {
                    try FleetFixture.makeStores(["tenant_\(index)_a", "tenant_\(index)_b", "tenant_\(index)_c"], at: "Recipes 1", url: url)
                }
                let fleet = try FleetFixture.writeFleet(servers: urls.enumerated().map { ("s\($0.offset)", $0.element, nil) })
                let replication = try PostgresConnection(url: urls[0])
                defer { replication.close() }
                let before = try ReplicationFingerprint.read(on: replication)
                let apply = try FleetFixture.run(["fleet", "apply", "--fleet", fleet, "--run", "once", "--jobs", "1", "--verbose"] + (online ? ["--online"] : []))
                let stable = try ReplicationFingerprint.read(on: replication) == before
                #expect(apply.exitCode == 0, "\(apply)")
                #expect(apply.stdoutLines.last == "run once: 6 stores: 6 migrated", "\(apply)")
                if stable {
                    counted = true
                    let log = apply.stderrLines
                    // Each read's text, found once per server (the survey's), not once per store.
                    for read in ["JOIN pg_publication_tables t ON t.pubname = p.pubname", "FROM pg_subscription_rel r JOIN pg_subscription s", "SELECT slot_name, slot_type, active,",
                                 "extract(epoch FROM r.replay_lag)", "greatest(c.reltuples, pg_stat_get_live_tuples(c.oid), 0)", "FROM pg_stats s, unnest("] {
                        #expect(log.filter { $0.contains(read) }.count == 2, "\(read): \(apply)")
                    }
                    // The server's replication fingerprint: once in each survey, then beside each store's catalog fingerprint.
                    #expect(log.filter { $0.contains("md5(concat(") }.count == 2 + 6, "\(apply)")
                    // The stores' catalogs: read by each survey, never again under a store's lock,
                    // online too (the survey recorded the extra objects). The same query reads the
                    // contract, built once per process or per server (whichever survey is first).
                    let catalogReads = log.filter { $0.contains("ORDER BY n.nspname, c.relname") }
                    #expect((3...4).contains(catalogReads.count), "\(catalogReads.count): \(apply)")
                }
                for (index, url) in urls.enumerated() {
                    let connection = try PostgresConnection(url: url)
                    defer { connection.close() }
                    for store in ["tenant_\(index)_a", "tenant_\(index)_b", "tenant_\(index)_c"] {
                        let contents = try FleetFixture.contents(of: store, on: connection).map { $0.replacingOccurrences(of: store, with: "reference") }
                        #expect(contents == reference, "\(store)")
                        #expect(try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = \(store)").value(0, "version_name") == "Recipes 3")
                    }
                }
            }
        }
        #expect(counted, "the cluster's replication state changed during each of three runs")
    }

    @Test("a subscription that starts writing into a store after the survey is seen under its lock: the store is refused as apply refuses it, unchanged; the others migrate", integration)
    func subscriptionAfterTheSurveyIsSeen() throws {
        try FleetFixture.withServers(1) { urls in
            let run = try FleetFixture.lateChangeRun("late", url: urls[0])
            let admin = try PostgresConnection(url: urls[0])
            defer { admin.close() }
            defer {
                _ = try? admin.execute("ALTER SUBSCRIPTION late_feed SET (slot_name = NONE)")
                _ = try? admin.execute("DROP SUBSCRIPTION late_feed")
            }
            let handChange = ResultBox()
            // After the survey and before any claim: a subscription now writes into tenant_a.recipe
            // (never connected; its record of the table is written as a table sync leaves it).
            run.onStart = { _ in
                handChange.record {
                    try admin.execute("""
                        CREATE SUBSCRIPTION late_feed CONNECTION 'host=127.0.0.1 port=1 dbname=nowhere connect_timeout=2'
                        PUBLICATION kitchen WITH (connect = false, enabled = false)
                        """)
                    try admin.execute("""
                        INSERT INTO pg_catalog.pg_subscription_rel (srsubid, srrelid, srsubstate, srsublsn)
                        SELECT oid, 'tenant_a.recipe'::regclass, 'r', NULL FROM pg_subscription WHERE subname = 'late_feed'
                        """)
                }
            }
            let before = try FleetFixture.contents(of: "tenant_a", on: admin)
            let outcomes = try run.execute()
            #expect(handChange.error == nil, "\(handChange.error.map { "\($0)" } ?? "")")
            let refused = try #require(outcomes.first { $0.store.store == "tenant_a" })
            #expect(refused.kind == .failed, "\(refused)")
            #expect(refused.error?.contains("store tenant_a is written by subscription late_feed") == true, "\(refused)")
            #expect(refused.error?.contains("Nothing was changed") == true, "\(refused)")
            #expect(outcomes.first { $0.store.store == "tenant_b" }?.kind == .migrated)
            #expect(try FleetFixture.contents(of: "tenant_a", on: admin) == before)
            #expect(try admin.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'tenant_a'").value(0, "version_name") == "Recipes 1")
            #expect(try admin.execute("SELECT version_name FROM orchestrator.stores WHERE store = 'tenant_b'").value(0, "version_name") == "Recipes 3")
        }
    }

    @Test("under a surveyed store's lock, its plan takes two round trips and is the plan apply makes", integration)
    func surveyedPlanInTwoRoundTrips() throws {
        try FleetFixture.withServers(1) { urls in
            try FleetFixture.makeStores(["tenant_a"], at: "Recipes 1", url: urls[0])
            let model = FleetFixture.model
            let target = try #require(model.version(named: "Recipes 3"))
            let connection = try PostgresConnection(url: urls[0])
            defer { connection.close() }
            connection.sessionFacts = SessionFacts()
            // Statistics that stay as they are: the survey's row estimates and apply's are the same.
            try connection.execute("ANALYZE")
            // The replication fingerprint reads cluster-wide catalogs (subscriptions, slots,
            // standbys) that other tests on this server change at any moment, and a change since
            // the survey rightly makes the plan read the topology again. So the count is taken
            // over a window in which the cluster's replication state stayed as surveyed: at most
            // five tries, and one of them must be such a window.
            var measured: (roundTrips: Int, plan: MigrationPlan)?
            for _ in 1...5 where measured == nil {
                let replicationBefore = try ReplicationFingerprint.read(on: connection)
                var survey = ServerSurvey(server: FleetServer(name: "s0", url: urls[0]), connection: connection, model: model, target: target)
                survey.readsFingerprints = true
                let surveyed = try #require(try survey.states().first { $0.store.store == "tenant_a" }?.surveyedCatalog)
                var migrator = StoreMigrator(connection: connection, model: model, store: "tenant_a", targetVersion: target.name)
                migrator.surveyedCatalog = surveyed
                // The first plan on the session learns what it keeps (the metadata tables are there).
                _ = try migrator.plan()
                let before = connection.roundTrips
                let plan = try migrator.plan()
                let roundTrips = connection.roundTrips - before
                if try ReplicationFingerprint.read(on: connection) == replicationBefore { measured = (roundTrips, plan) }
            }
            let (roundTrips, plan) = try #require(measured, "the cluster's replication state changed during each of five tries")
            // The snapshot's one statement and the pipeline (the unfinished online step, the
            // recheck, the recorded versions and the expansion in flight): no topology, no row
            // estimates.
            #expect(roundTrips == 2)
            let plain = try PostgresConnection(url: urls[0])
            defer { plain.close() }
            let single = try StoreMigrator(connection: plain, model: model, store: "tenant_a", targetVersion: target.name).plan()
            #expect(plan == single)
            // Two chefs, three recipes, four ingredients, as the survey counted them.
            #expect(plan.steps.first?.rowEstimate == 9, "\(plan.steps)")
        }
    }

    @Test("under a surveyed store's lock, an expansion in flight read in the pipeline blocks its plan, as apply's own read does", integration)
    func surveyedPlanSeesTheExpansionInFlight() throws {
        try FleetFixture.withServers(1) { urls in
            try FleetFixture.makeStores(["tenant_a"], at: "Recipes 1", url: urls[0])
            let expand = try OrchestratorBinary.run(["apply", "--expand", "--model", "migrations", "--store", "tenant_a", "--to", "Recipes 2"], databaseURL: urls[0])
            #expect(expand.exitCode == 0, "\(expand)")
            let model = FleetFixture.model
            let target = try #require(model.version(named: "Recipes 3"))
            let connection = try PostgresConnection(url: urls[0])
            defer { connection.close() }
            connection.sessionFacts = SessionFacts()
            var survey = ServerSurvey(server: FleetServer(name: "s0", url: urls[0]), connection: connection, model: model, target: target)
            survey.readsFingerprints = true
            let surveyed = try #require(try survey.states().first { $0.store.store == "tenant_a" }?.surveyedCatalog)
            var migrator = StoreMigrator(connection: connection, model: model, store: "tenant_a", targetVersion: target.name)
            migrator.surveyedCatalog = surveyed
            let plan = try migrator.plan()
            #expect(plan.blockerDetails.map(\.code) == [.expandInFlight], "\(plan.blockers)")
            #expect(plan.blockers.first?.contains("through tenant_a@Recipes_1 (apply --expand)") == true, "\(plan.blockers)")
            let plain = try PostgresConnection(url: urls[0])
            defer { plain.close() }
            #expect(try StoreMigrator(connection: plain, model: model, store: "tenant_a", targetVersion: target.name).plan() == plan)
        }
    }
}
