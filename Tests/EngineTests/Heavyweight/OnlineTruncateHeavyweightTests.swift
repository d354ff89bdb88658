import Foundation
import Mapping
import Planning
import Testing
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// `apply --online` of a heavyweight step while the application truncates a table of the old
/// store whose rows the bulk pass already mapped: the rows it removed are gone from the new
/// store too, and the store equals an offline migration of the final data, row by row.
@Suite(integration) struct OnlineTruncateHeavyweightTests {
    typealias S = MigratedStore
    typealias Kitchen = HeavyweightMigrationTests
    typealias Online = OnlineHeavyweightTests

    /// Once the chefs are mapped: chef truncated (recipe with it, through its key), then new
    /// chefs and recipes, in the same transaction.
    static let truncateAndRefill: [SQL] = [
        "BEGIN",
        "TRUNCATE shop.chef CASCADE",
        "INSERT INTO shop.chef (_pk, _entity, name) VALUES (100001, 'Chef', 'after the truncate')",
        "INSERT INTO shop.recipe (_pk, _entity, name, amount, temperature, chef_pk) VALUES (100001, 'Recipe', 'after', 5, 212, 100001), (100002, 'Recipe', 'alone', 6, 32, NULL)",
        "COMMIT",
    ]

    static let betweenRounds: [SQL] = ["INSERT INTO shop.recipe (_pk, _entity, name, amount, temperature, chef_pk) VALUES (100003, 'Recipe', 'between', 7, 50, 100001)"]

    @Test func aTruncateOfATableAlreadyMappedRemovesItsRowsFromTheNewStore() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            let script = OnlineApplyScript(
                writer: try TwinWriter.script(sessionsLike: connection, []), first: "ChefToChef", duringStageOne: Self.truncateAndRefill,
                last: "RecipeToRecipe", betweenRounds: Self.betweenRounds
            )
            let (report, _) = try script.apply(Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection), on: connection)
            #expect(report.appliedSteps.map(\.step.kind) == [.heavyweight])
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.chef").int(0, "n") == 1)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == 3)
            try Online.expectNoTriggersLeft(on: connection)

            let final = try Online.sourceSnapshot("shop~", on: connection)
            let online = try Online.snapshot(S.store, on: connection)
            let reference = try Online.offlineMigration(after: Self.truncateAndRefill + Self.betweenRounds)
            #expect(final == reference.source, "the reference store holds the same final data")
            TwinComparison.expectSameRows(online, reference.migrated)
        }
    }

    /// Once the links are made in the new store (stage 2's first pass done): the join table
    /// truncated and two links written. Its statement trigger logs both keys of every link it
    /// removed, so the rounds make the links of those recipes and tags again, from none.
    @Test func aTruncateOfAJoinTableWhoseLinksWereMappedRemovesThemFromTheNewStore() throws {
        typealias Tags = OnlineJoinTableTests
        let model = try Tags.model(ordered: false)
        let truncate: [SQL] = ["BEGIN", "TRUNCATE shop.recipe__tags", Tags.link(3, 4, ordered: false), Tags.link(5, 6, ordered: false), "COMMIT"]
        try S.withStore(model) { connection in
            var truncated = false
            var script = OnlineApplyScript(
                writer: try TwinWriter.script(sessionsLike: connection, []), first: "RecipeToRecipe", duringStageOne: [], last: "TagToTag", betweenRounds: Tags.betweenRounds
            )
            script.onEvent = { event in
                guard !truncated, event.kind == .passFinished, event.stage == .pass(.createRelationships) else { return }
                truncated = true
                for write in truncate { try connection.execute(write) }
            }
            _ = try script.apply(Tags.migrator(model, on: connection), on: connection)
            #expect(truncated, "no pass of stage 2 finished")
            #expect(try S.version(on: connection) == "v2")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe__tags").int(0, "n") == 2)
            try Online.expectNoTriggersLeft(on: connection)
            let reference = try Tags.offlineMigration(ordered: false, after: truncate + Tags.betweenRounds)
            #expect(try Tags.sourceSnapshot("shop~", ordered: false, on: connection) == reference.source, "the reference store holds the same final data")
            #expect(try Tags.snapshot(S.store, ordered: false, on: connection) == reference.migrated)
        }
    }

    /// In a REPEATABLE READ transaction the truncate is refused, naming the table: its
    /// snapshot could miss rows committed since. Nothing changes; the step ends as offline.
    @Test func aTruncateInARepeatableReadTransactionIsRefusedNamingTheTable() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            let session = try connection.reconnect()
            defer { session.close() }
            var refusal: PostgresError?
            let written: [SQL] = ["UPDATE shop.chef SET name = name || ' written' WHERE _pk IN (3, 4)"]
            let script = OnlineApplyScript(
                writer: try TwinWriter.script(sessionsLike: connection, []), first: "ChefToChef", duringStageOne: written, last: "RecipeToRecipe", betweenRounds: Online.betweenRounds,
                onEvent: { event in
                    guard refusal == nil, event.kind == .passFinished, event.entityMapping == "ChefToChef" else { return }
                    try session.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                    defer { _ = try? session.execute("ROLLBACK") }
                    _ = try session.execute("SELECT count(*) FROM shop.recipe")
                    refusal = #expect(throws: PostgresError.self) { try session.execute("TRUNCATE shop.chef CASCADE") }
                }
            )
            _ = try script.apply(Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection), on: connection)
            #expect(refusal?.sqlState == "55000")
            #expect(refusal?.message.contains("TRUNCATE of shop.chef while apply --online runs a heavyweight step on it") == true, "\(String(describing: refusal))")
            #expect(try Online.snapshot(S.store, on: connection) == Online.offlineMigration(after: written + Online.betweenRounds).migrated)
        }
    }

    /// Once the recipes are mapped with their card's title (read through the card's column):
    /// the cards truncated and one written. The card table's statement trigger logs the recipes
    /// its column pointed at, which the rounds map again: only the recipe of the new card has a
    /// title, as offline.
    @Test func aTruncateOfATableHoldingAOneToOneReadFromTheOtherSideMapsTheRowsItPointedAtAgain() throws {
        typealias Cards = OnlineOneToOnePathTests
        let model = try Cards.cards()
        let truncate: [SQL] = ["BEGIN", "TRUNCATE shop.card", "INSERT INTO shop.card (_pk, _entity, title, recipe_pk) VALUES (100001, 'Card', 'after', 5)", "COMMIT"]
        let betweenRounds: [SQL] = ["UPDATE shop.recipe SET name = name || ' last' WHERE _pk = 20"]
        try S.withStore(model) { connection in
            for write in Cards.pairs { try connection.execute(write) }
            let migrator = StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(Cards.mapping())])
            let script = OnlineApplyScript(
                writer: try TwinWriter.script(sessionsLike: connection, []), first: "RecipeToRecipe", duringStageOne: truncate, last: "CardToCard", betweenRounds: betweenRounds
            )
            _ = try script.apply(migrator, on: connection)
            #expect(try S.version(on: connection) == "Cards 2")
            #expect(try connection.execute("SELECT _pk, card_title FROM shop.recipe WHERE card_title IS NOT NULL").rows == [["5", "after"]])
            #expect(try Cards.snapshot(S.store, on: connection) == Cards.offlineMigration(after: truncate + betweenRounds))
        }
    }
}
