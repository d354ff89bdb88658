import Engine
import Foundation
import PostgresClient
import Testing
import TestSupport

@Suite("fleet status: catalogs read in parts on several sessions")
struct FleetSurveyReadersTests {
    /// Counts the sessions a survey opens besides its own.
    final class Opened: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    @Test("the states read on three sessions are those read on one: up to date, drifted, to migrate", integration)
    func partsMatchOneRead() throws {
        try FleetFixture.withServers(1) { urls in
            let upToDate = (1 ... 6).map { "t\($0)" }
            try FleetFixture.makeStores(upToDate, at: "Recipes 3", url: urls[0])
            try FleetFixture.makeStores(["old"], at: "Recipes 1", url: urls[0])
            let connection = try PostgresConnection(url: urls[0])
            defer { connection.close() }
            try connection.execute("ALTER TABLE t5.recipe DROP COLUMN rating")
            try connection.execute("CREATE INDEX extra ON t2.chef (name)")
            let model = FleetFixture.model
            let target = try #require(model.version(named: "Recipes 3"))
            let server = FleetServer(name: "one", url: urls[0])

            let alone = try ServerSurvey(server: server, connection: connection, model: model, target: target).states()
            let opened = Opened()
            var inParts = ServerSurvey(server: server, connection: connection, model: model, target: target) {
                opened.add()
                return try PostgresConnection(url: urls[0])
            }
            inParts.readers = 3
            inParts.storesPerReader = 2
            let parts = try inParts.states()

            #expect(opened.value == 2)
            #expect(parts == alone)
            #expect(parts.map { "\($0.store.store) \($0.status)" } == [
                "old migrationRequired", "t1 upToDate", "t2 upToDate", "t3 upToDate", "t4 upToDate", "t5 drifted", "t6 upToDate",
            ])
            #expect(parts.first { $0.store.store == "t5" }?.detail?.contains("missing column recipe.rating") == true)
        }
    }
}
