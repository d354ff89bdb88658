import Foundation
import ObjectModel
import Planning
import PostgresClient
import Testing
import TestSupport
@testable import Engine

/// `fleet apply`'s survey records a store's extra tables and columns (`SurveyedCatalog.extras`):
/// under the lock, while the catalog fingerprint holds, an online plan takes them from it and
/// reads only whether each holds values, now. A survey kept by an earlier release (no such
/// field) reads the drift under the lock, as before.
@Suite(integration) struct SurveyedExtrasTests {
    typealias S = MigratedStore

    static let loss = "column animal.note of store shop is not in the contract (extra drift, the team's own): apply --online rebuilds table animal without it, so its values are dropped (the offline step keeps it)"

    static func survey(_ model: VersionedModel, on connection: PostgresConnection) throws -> SurveyedCatalog {
        var survey = ServerSurvey(
            server: FleetServer(name: "s0", url: "postgres://unused"), connection: connection, model: model, target: try #require(model.version(named: "v2"))
        )
        survey.readsFingerprints = true
        return try #require(try survey.states().first { $0.store.store == S.store }?.surveyedCatalog)
    }

    @Test func valuesWrittenAfterTheSurveyAreNamedByThePlanAndRefusedByApply() throws {
        let model = try HierarchyMigrationTests.dogLeavesAnimals()
        try S.withStore(model) { connection in
            try connection.execute("ALTER TABLE shop.animal ADD COLUMN note text")
            let surveyed = try Self.survey(model, on: connection)
            #expect(surveyed.extras == [SurveyedCatalog.Extra(table: "animal", column: "note")])
            var migrator = StoreMigrator(connection: connection, model: model, store: S.store)
            migrator.surveyedCatalog = surveyed
            // Empty at the survey and now: nothing is lost, and the plan is apply's.
            let empty = try migrator.plan(mode: .online)
            #expect(empty.steps.flatMap(\.hazards).allSatisfy { !$0.isDataLoss }, "\(empty.steps)")
            #expect(empty == (try StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .online)))

            // Values written after the survey (no DDL: the fingerprint holds) are read under the lock.
            try connection.execute("UPDATE shop.animal SET note = 'ours' WHERE _pk IN (1, 2)")
            let named = try migrator.plan(mode: .online)
            #expect(named.steps.flatMap(\.hazards).filter(\.isDataLoss).map(\.message) == [Self.loss])
            #expect(named == (try StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .online)))
            let refusal = #expect(throws: DataLossNotAllowed.self) {
                try migrator.applyUnderLock(options: ApplyOptions(batchSize: 7, online: true))
            }
            #expect(refusal?.losses == ["step 1 of 1 ('v1' -> 'v2') " + Self.loss])
            #expect(try S.version(on: connection) == "v1")
            #expect(try connection.execute("SELECT count(note) AS n FROM shop.animal").int(0, "n") == 2)
        }
    }

    @Test func aSurveyOfAnEarlierReleaseReadsTheDriftUnderTheLock() throws {
        let model = try HierarchyMigrationTests.dogLeavesAnimals()
        try S.withStore(model) { connection in
            try connection.execute("ALTER TABLE shop.animal ADD COLUMN note text")
            try connection.execute("UPDATE shop.animal SET note = 'ours' WHERE _pk = 1")
            connection.sessionFacts = SessionFacts()
            let surveyed = try Self.survey(model, on: connection)
            // The journal's text as the earlier release wrote it: no `extras`.
            let text = try #require(surveyed.journalText)
            var object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            #expect(object.removeValue(forKey: "extras") != nil)
            let earlierText = String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            let earlier = try #require(SurveyedCatalog(journalText: earlierText))
            #expect(earlier.extras == nil)
            var counts: [String: Int] = [:]
            var plans: [String: MigrationPlan] = [:]
            for (name, catalog) in [("recorded", surveyed), ("earlier", earlier)] {
                var migrator = StoreMigrator(connection: connection, model: model, store: S.store)
                migrator.surveyedCatalog = catalog
                _ = try migrator.plan(mode: .online)
                let before = connection.roundTrips
                plans[name] = try migrator.plan(mode: .online)
                counts[name] = connection.roundTrips - before
            }
            let single = try StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .online)
            #expect(plans["recorded"] == single)
            #expect(plans["earlier"] == single)
            #expect(single.steps.flatMap(\.hazards).filter(\.isDataLoss).map(\.message) == [Self.loss])
            // The earlier release's survey: the catalog read again and compared under the lock.
            #expect((counts["earlier"] ?? 0) > (counts["recorded"] ?? 0) + 3, "\(counts)")
        }
    }
}
