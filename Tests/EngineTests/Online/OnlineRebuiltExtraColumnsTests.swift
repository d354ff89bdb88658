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

    @Test func aColumnOfTheTeamsOwnOnARebuiltTableTakesConsent() throws {
        let model = try HierarchyMigrationTests.dogLeavesAnimals()
        try S.withStore(model) { connection in
            try connection.execute("ALTER TABLE shop.animal ADD COLUMN note text")
            try connection.execute("UPDATE shop.animal SET note = 'ours' WHERE _pk IN (1, 2)")
            let migrator = StoreMigrator(connection: connection, model: model, store: S.store)
            let refusal = #expect(throws: DataLossNotAllowed.self) { try migrator.apply(options: ApplyOptions(batchSize: 7, online: true)) }
            #expect(refusal?.losses == [
                "column animal.note of store shop is not in the contract (extra drift, the team's own): apply --online rebuilds table animal without it, so its values are dropped (the offline step keeps it)",
            ])
            #expect(try S.version(on: connection) == "v1")
            #expect(try connection.execute("SELECT count(note) AS n FROM shop.animal").int(0, "n") == 2)

            // Only NULLs: nothing is lost, and the run goes ahead.
            try connection.execute("UPDATE shop.animal SET note = NULL")
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
            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(allowDataLoss: true, batchSize: 7, online: true))
            #expect(try S.version(on: connection) == "v2")
            #expect(try S.rows("animal", ["name"], on: connection) == animals)
            #expect(try connection.execute("SELECT count(*) AS n FROM information_schema.columns WHERE table_schema = 'shop' AND table_name = 'animal' AND column_name = 'note'").int(0, "n") == 0)
        }
    }
}
