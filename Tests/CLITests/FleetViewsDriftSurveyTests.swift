@testable import Engine
import Foundation
import ObjectModel
import PostgresClient
import SQLBuilding
import Testing
import TestSupport

/// `fleet status`'s survey judges the previous version's views of a server's expanded stores
/// within its catalog pass: one statement for all of them, however many they are.
@Suite("fleet status: the views of expanded stores, read once per server")
struct FleetViewsDriftSurveyTests {
    @Test("a survey of three expanded stores reads as many statements as a survey of one, and finds the store whose view was dropped drifted", integration)
    func oneStatementForAllViews() throws {
        try Self.withThreeExpanded { urls, connection, model, target in
            // Each survey builds its contracts afresh, so both read the same statements but
            // for the stores' own: the views' read must be one for any number of stores.
            func survey(_ pattern: String) throws -> (states: [FleetStoreState], statements: Int) {
                let server = FleetServer(name: "s1", url: urls[0], stores: [pattern])
                let before = connection.roundTrips
                let states = try ServerSurvey(server: server, connection: connection, model: model, target: target, contracts: ContractCatalogs()).states()
                return (states, connection.roundTrips - before)
            }
            let one = try survey("t_a")
            let all = try survey("t_*")
            #expect(one.states.map { "\($0.store.store) \($0.status)" } == ["t_a upToDate"])
            #expect(all.states.map { "\($0.store.store) \($0.status)" } == ["t_a upToDate", "t_b drifted", "t_c upToDate"])
            #expect(all.states.first { $0.store.store == "t_b" }?.detail?.contains("t_b@Shop_2.item") == true, "\(all.states)")
            #expect(all.statements == one.statements, "one store: \(one.statements) statements, three: \(all.statements)")
            // The rows are untouched by the survey.
            #expect(try connection.execute("SELECT name, sku FROM t_b.item").rows == [["pen", "P-1"]])
        }
    }

    @Test("an expansion completed between the survey's read of the expansions and its read of the views is not judged drifted", integration)
    func completedMeanwhileIsNotDrifted() throws {
        try Self.withThreeExpanded { urls, connection, model, target in
            let survey = ServerSurvey(server: FleetServer(name: "s1", url: urls[0], stores: ["t_*"]), connection: connection, model: model, target: target)
            var states = try survey.states()
            #expect(states.map { "\($0.store.store) \($0.status)" } == ["t_a upToDate", "t_b drifted", "t_c upToDate"])
            for index in states.indices { states[index].status = .upToDate }

            // t_a's expansion ends after the survey read it: its views schema is gone.
            let complete = try OrchestratorBinary.run(["complete", "--store", "t_a"], databaseURL: urls[0])
            #expect(complete.exitCode == 0, "\(complete)")
            #expect(try connection.execute(#"SELECT 1 FROM pg_namespace WHERE nspname = 't_a@Shop_2'"#).rows.isEmpty)
            try survey.judgeViews(of: &states)
            #expect(states.map { "\($0.store.store) \($0.status)" } == ["t_a upToDate", "t_b drifted", "t_c upToDate"], "\(states)")
        }
    }

    /// Three stores expanded to Shop 3 on one server, t_b's view of `item` dropped.
    static func withThreeExpanded(_ body: ([String], PostgresConnection, VersionedModel, ModelVersion) throws -> Void) throws {
        try FleetFixture.withServers(1) { urls in
            try withTemporaryFolder { folder in
                let connection = try PostgresConnection(url: urls[0])
                defer { connection.close() }
                let modelPath = try FleetExpandTests.expandThreeStores(in: folder, on: connection, url: urls[0])
                try connection.execute(#"DROP VIEW "t_b@Shop_2".item"#)
                let model = try ModelLoader.loadEachVersion(path: modelPath)
                try body(urls, connection, model, try #require(model.version(named: "Shop 3")))
            }
        }
    }
}
