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

    @Test("the catalogs held a part at a time give the states and surveyed catalogs of one read", integration)
    func heldInPartsMatchOneRead() throws {
        try FleetFixture.withServers(1) { urls in
            try FleetFixture.makeStores((1 ... 6).map { "t\($0)" }, at: "Recipes 3", url: urls[0])
            try FleetFixture.makeStores(["old"], at: "Recipes 1", url: urls[0])
            let connection = try PostgresConnection(url: urls[0])
            defer { connection.close() }
            try connection.execute("ALTER TABLE t4.recipe DROP COLUMN rating")
            try connection.execute("INSERT INTO t6.chef (_entity, name) VALUES ('Chef', 'Ada'), ('Chef', 'Bo')")
            try connection.execute("ANALYZE t6.chef")
            let model = FleetFixture.model
            let target = try #require(model.version(named: "Recipes 3"))
            let server = FleetServer(name: "one", url: urls[0])

            var whole = ServerSurvey(server: server, connection: connection, model: model, target: target)
            whole.readsFingerprints = true
            let alone = try whole.states()
            let opened = Opened()
            var inParts = ServerSurvey(server: server, connection: connection, model: model, target: target) {
                opened.add()
                return try PostgresConnection(url: urls[0])
            }
            inParts.readsFingerprints = true
            inParts.readers = 2
            inParts.storesPerReader = 1
            let parts = try inParts.states()

            // Seven stores, two held at once: three parts of two read on two sessions, then one alone.
            #expect(inParts.storesHeldAtOnce == 2)
            #expect(opened.value == 3)
            #expect(parts == alone)
            #expect(parts.filter { $0.surveyedCatalog != nil }.map(\.store.store) == ["old", "t1", "t2", "t3", "t5", "t6"])
            #expect(parts.first { $0.store.store == "t4" }?.status == .drifted)
            let chefs = try connection.execute("SELECT count(*) AS n FROM t6.chef").value(0, "n").flatMap { Int($0) }
            #expect(chefs ?? 0 > 2)
            #expect(parts.first { $0.store.store == "t6" }?.surveyedCatalog?.rowEstimates?.tables["chef"] == chefs)
        }
    }
}
