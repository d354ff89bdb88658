import Foundation
import Testing
import ObjectModel
import PostgresClient
import TestSupport
@testable import Engine

/// `apply --online` rebuilds the table an entity's rows move out of with the destination's
/// columns: a column of the team's own on it holding values takes `--allow-data-loss`.
/// Proves Planning/Changes: DeleteRows (with Online/OnlineShadowTable.swift).
@Suite(integration) struct OnlineRebuiltExtraColumnsTests {
    typealias S = MigratedStore

    static let loss = "column animal.note of store shop is not in the contract (extra drift, the team's own): apply --online rebuilds table animal without it, so its values are dropped (the offline step keeps it)"

    @Test func planOnlineNamesTheLossAndApplyWithoutConsentChangesNothing() throws {
        let model = try HierarchyMigrationTests.dogLeavesAnimals()
        try S.withStore(model) { connection in
            try connection.execute("ALTER TABLE shop.animal ADD COLUMN note text")
            try connection.execute("UPDATE shop.animal SET note = 'ours' WHERE _pk IN (1, 2)")
            let migrator = StoreMigrator(connection: connection, model: model, store: S.store)
            // Planning decides it: plan --online names the loss, offline (which keeps the column) does not.
            let online = try migrator.plan(mode: .online)
            #expect(online.steps.flatMap(\.hazards).filter(\.isDataLoss).map(\.message) == [Self.loss])
            #expect(try migrator.plan().steps.flatMap(\.hazards).allSatisfy { !$0.message.contains("animal.note") })

            let refusal = #expect(throws: DataLossNotAllowed.self) { try migrator.apply(options: ApplyOptions(batchSize: 7, online: true)) }
            #expect(refusal?.losses == ["step 1 of 1 ('v1' -> 'v2') " + Self.loss])
            #expect(try S.version(on: connection) == "v1")
            #expect(try connection.execute("SELECT count(note) AS n FROM shop.animal").int(0, "n") == 2)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.animal WHERE _entity = 'Dog'").int(0, "n") ?? 0 > 0)

            // Only NULLs: nothing is lost, nothing named, and the run goes ahead.
            try connection.execute("UPDATE shop.animal SET note = NULL")
            #expect(try migrator.plan(mode: .online).steps.flatMap(\.hazards).allSatisfy { !$0.message.contains("animal.note") })
            _ = try migrator.apply(options: ApplyOptions(batchSize: 7, online: true))
            #expect(try S.version(on: connection) == "v2")
        }
    }

    @Test func consentLetsTheRebuildDropIt() throws {
        let model = try HierarchyMigrationTests.dogLeavesAnimals()
        try S.withStore(model) { connection in
            try connection.execute("ALTER TABLE shop.animal ADD COLUMN note text")
            try connection.execute("UPDATE shop.animal SET note = 'ours' WHERE _pk = 1")
            let animals = try S.rows("animal", ["name"], where: "_entity = 'Animal'", on: connection)
            #expect(try StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .online).steps.flatMap(\.hazards).contains { $0.message == Self.loss })
            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(allowDataLoss: true, batchSize: 7, online: true))
            #expect(try S.version(on: connection) == "v2")
            #expect(try S.rows("animal", ["name"], on: connection) == animals)
            #expect(try connection.execute("SELECT count(*) AS n FROM information_schema.columns WHERE table_schema = 'shop' AND table_name = 'animal' AND column_name = 'note'").int(0, "n") == 0)
        }
    }
}
