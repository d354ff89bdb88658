@testable import Engine
import Foundation
import Planning
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// A fleet run holds nothing per store in memory while its stores migrate: each store's survey
/// is kept in its journal row and read with its claim, and the final report is read from the
/// journal in pages.
@Suite("fleet apply: the survey kept in the journal, the outcomes read in pages")
struct FleetJournalSurveyTests {
    @Test("outcomes read two at a time are every store of the run once, in the journal's order", integration)
    func outcomesInPages() throws {
        try FleetFixture.withServers(1) { urls in
            let stores = ["tenant_a", "tenant_b", "tenant_c", "tenant_d", "tenant_e"]
            try FleetFixture.makeStores(stores, at: "Recipes 1", url: urls[0])
            let run = try Self.run("paged", url: urls[0])
            try run.perform()
            var paged: [FleetOutcome] = []
            try run.forEachOutcome(pageSize: 2) { paged.append($0) }
            let journal = try PostgresConnection(url: urls[0])
            defer { journal.close() }
            let rows = try journal.execute("SELECT store, outcome FROM orchestrator_fleet.stores WHERE run = 'paged' ORDER BY position")
            #expect(paged.map(\.store.store) == rows.rows.indices.map { rows.value($0, "store") ?? "" })
            #expect(paged.map(\.store.store).sorted() == stores)
            #expect(paged.allSatisfy { $0.kind == .migrated && $0.to == "Recipes 3" }, "\(paged)")
            #expect(try run.execute() == paged)
            // Two rows sharing a position (positions are not unique in the journal) at a page's
            // edge: neither is skipped.
            try journal.execute("UPDATE orchestrator_fleet.stores SET position = 1 WHERE run = 'paged' AND position IN (1, 2)")
            var shared: [String] = []
            try run.forEachOutcome(pageSize: 2) { shared.append($0.store.store) }
            #expect(shared.sorted() == stores)
        }
    }

    @Test("a journal made before the survey's column gains it; each store's survey is in its row and is what its claim used", integration)
    func surveyKeptInTheJournal() throws {
        try FleetFixture.withServers(1) { urls in
            try FleetFixture.makeStores(["tenant_a", "tenant_b"], at: "Recipes 1", url: urls[0])
            let journal = try PostgresConnection(url: urls[0])
            defer { journal.close() }
            // The journal as the previous release made it: no `surveyed` column.
            for statement in FleetJournal.statements where !"\(statement)".contains("DO $$") {
                try journal.execute(SQL(unsafeRaw: "\(statement)".replacingOccurrences(of: "\\s*surveyed text,", with: "", options: .regularExpression)))
            }
            #expect(try Self.hasSurveyedColumn(journal) == false)
            let run = try Self.run("kept", url: urls[0])
            let outcomes = try run.execute()
            #expect(outcomes.map(\.kind) == [.migrated, .migrated], "\(outcomes)")
            #expect(try Self.hasSurveyedColumn(journal))
            let rows = try journal.execute("SELECT store, surveyed FROM orchestrator_fleet.stores WHERE run = 'kept' ORDER BY store")
            #expect(rows.rows.count == 2)
            for row in rows.rows.indices {
                let surveyed = try #require(SurveyedCatalog(journalText: rows.value(row, "surveyed")), "\(rows.value(row, "store") ?? "")")
                #expect(surveyed.versionName == "Recipes 1")
                #expect(!surveyed.fingerprint.isEmpty)
                #expect(surveyed.replicationFingerprint != nil)
                #expect(surveyed.rowEstimates != nil)
            }
            // A row without a survey (an earlier release's) is read as none: the store's checks
            // read its catalog under the lock.
            #expect(SurveyedCatalog(journalText: nil) == nil)
            #expect(SurveyedCatalog(journalText: "{\"versionName\": 1}") == nil)
        }
    }

    @Test("a resumed run's stores left to do take the new survey; a store done keeps its row as it was", integration)
    func resumedRunRefreshesSurveys() throws {
        try FleetFixture.withServers(1) { urls in
            let connection = try PostgresConnection(url: urls[0])
            defer { connection.close() }
            let journal = FleetJournal(connection: connection, run: "again")
            try journal.bootstrap()
            func states(_ fingerprint: String) -> [FleetStoreState] {
                ["tenant_a", "tenant_b"].map { store in
                    var state = FleetStoreState(store: FleetStore(server: "s0", store: store), status: .migrationRequired, version: "Recipes 1", modelHash: "h")
                    state.surveyedCatalog = SurveyedCatalog(versionName: "Recipes 1", modelHash: "h", fingerprint: fingerprint)
                    return state
                }
            }
            let order = [(index: 0, wave: 0), (index: 1, wave: 0)]
            try journal.prepare(model: "Recipes", target: "Recipes 3", fleetFile: "f.yaml", waves: ["all"], states: states("first"), order: order)
            try connection.execute("UPDATE orchestrator_fleet.stores SET outcome = 'migrated' WHERE run = 'again' AND store = 'tenant_a'")
            try journal.prepare(model: "Recipes", target: "Recipes 3", fleetFile: "f.yaml", waves: ["all"], states: states("second"), order: order)
            let rows = try connection.execute("SELECT store, surveyed FROM orchestrator_fleet.stores WHERE run = 'again' ORDER BY store")
            let fingerprints = rows.rows.indices.map { SurveyedCatalog(journalText: rows.value($0, "surveyed"))?.fingerprint }
            #expect(fingerprints == ["first", "second"])
        }
    }

    static func run(_ name: String, url: String) throws -> FleetRun {
        let path = try FleetFixture.writeFleet(servers: [("s0", url, nil)])
        let target = try #require(FleetFixture.model.version(named: "Recipes 3"))
        return FleetRun(
            fleet: try FleetFile.load(path: path), model: FleetFixture.model, target: target, explicitMappings: [],
            options: ApplyOptions(), run: name, jobs: 2, connect: { try PostgresConnection(url: $0) }
        )
    }

    static func hasSurveyedColumn(_ connection: PostgresConnection) throws -> Bool {
        !(try connection.execute("""
            SELECT FROM information_schema.columns WHERE table_schema = 'orchestrator_fleet' AND table_name = 'stores' AND column_name = 'surveyed'
            """)).isEmpty
    }
}
