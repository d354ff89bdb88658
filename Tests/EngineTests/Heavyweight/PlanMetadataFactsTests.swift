import Foundation
import Testing
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// Issue 21, item 3's rest: a plan reads which metadata tables there are once
/// (`StoreMigrator.plan`, `SessionFacts(keepsAbsence:)`), not once per reader of them (the
/// snapshot, the surroundings, the neighbour schemas, the checkpoints).
@Suite(integration) struct PlanMetadataFactsTests {
    typealias S = MigratedStore
    typealias H = HeavyweightMigrationTests

    @Test func aHeavyweightPlanAsksForEachMetadataTableOnceAndKeepsNothingAfterwards() throws {
        let model = try H.kitchen()
        try S.withStore(model) { connection in
            let migrator = H.migrator(model, H.kitchenMapping(), on: connection)
            // The first plan builds the drift contract, which the next ones reuse.
            _ = try migrator.plan()
            let before = connection.roundTrips
            let plan = try migrator.plan()
            let plain = connection.roundTrips - before
            #expect(plan.steps.map(\.kind) == [.heavyweight])
            // The plan's facts go with it: the next plan (after a bootstrap, say) asks again.
            #expect(connection.sessionFacts == nil)
            // A session that already knows every fact (fleet apply's) asks none of them.
            connection.sessionFacts = SessionFacts()
            defer { connection.sessionFacts = nil }
            _ = try migrator.plan()
            let learnedBefore = connection.roundTrips
            _ = try migrator.plan()
            let learned = connection.roundTrips - learnedBefore
            // Once each: `stores`, `store_schemas`, `checkpoints`, `expansions` and the lock
            // table's size (before, `stores` twice and `store_schemas` three times).
            #expect(plain - learned == 5)
        }
    }
}
