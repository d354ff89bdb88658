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

    /// `apply` keeps the session's facts for its whole run: the plan before the lock, the
    /// metadata bootstrap and the plan under it ask once which metadata tables there are and
    /// the lock table's size (before, each plan and the bootstrap asked again: 20 round trips
    /// for these facts on this step, 8 now).
    @Test func anApplyAsksForEachMetadataFactOnceAcrossItsTwoPlans() throws {
        let model = try H.kitchen()
        try S.withStore(model) { connection in
            for store in ["shop_b", "shop_c"] {
                try SampleDataTests.createAndFill(model, version: "Kitchen 1", store: store, rows: 300, on: connection)
            }
            func migrator(_ store: String) -> StoreMigrator {
                var migrator = H.migrator(model, H.kitchenMapping(), on: connection)
                migrator.store = store
                return migrator
            }
            // Every fact learned (and the drift contract built) by a first apply.
            let known = SessionFacts()
            connection.sessionFacts = known
            _ = try migrator(S.store).apply()
            var before = connection.roundTrips
            _ = try migrator("shop_b").apply()
            let knowing = connection.roundTrips - before
            connection.sessionFacts = nil
            before = connection.roundTrips
            let report = try migrator("shop_c").apply()
            let alone = connection.roundTrips - before
            #expect(report.appliedSteps.map(\.step.kind) == [.heavyweight])
            #expect(try connection.execute("SELECT count(*) AS n FROM shop_c.recipe").int(0, "n") == 300)
            // The apply's own facts go with it.
            #expect(connection.sessionFacts == nil)
            // Once each: the six metadata tables `apply` asks for (`stores`, `store_schemas`,
            // `controls`, `checkpoints`, `runs`, `expansions`), the checkpoint table's own check
            // and the lock table's size.
            #expect(alone - knowing == 8, "\(alone) round trips alone, \(knowing) knowing every fact")
        }
    }
}
