import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// `apply --online` of a heavyweight step whose recipes read their card through a one-to-one
/// the card keeps (`$source.card.title`, `card.recipe_pk`): a card re-pointed to another
/// recipe or deleted writes only the card, so its trigger logs the recipe it left, which is
/// mapped again (`CatchUpPointedRows`).
@Suite(integration) struct OnlineOneToOnePathTests {
    typealias S = MigratedStore
    typealias Online = OnlineHeavyweightTests

    static func cards() throws -> VersionedModel {
        try S.model([
            ("Cards 1", S.version("""
                Card: {attributes: {title: string}, relationships: {recipe: {destination: Recipe, inverse: card}}}
                Recipe: {attributes: {name: string}, relationships: {card: {destination: Card, inverse: recipe}}}
                """)),
            ("Cards 2", S.version("""
                Card: {attributes: {title: string}, relationships: {recipe: {destination: Recipe, inverse: card}}}
                Recipe: {attributes: {name: string, cardTitle: string}, relationships: {card: {destination: Card, inverse: recipe}}}
                """)),
        ])
    }

    /// Recipes first, so that the writes once they are mapped come after the bulk pass read them.
    static func mapping() -> MappingModel {
        MappingModel(source: "Cards 1", destination: "Cards 2", entityMappings: [
            EntityMappingDefinition(name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe", attributeMappings: [
                PropertyMappingDefinition(name: "cardTitle", valueExpression: "$source.card.title"),
            ]),
            EntityMappingDefinition(name: "CardToCard", type: .copy, sourceEntity: "Card", destinationEntity: "Card"),
        ], file: "cards-1-to-2.yaml")
    }

    /// Each card on the recipe of its own key, one in three on none (their recipes have no card).
    static let pairs: [SQL] = ["UPDATE shop.card SET recipe_pk = CASE WHEN _pk % 3 = 0 THEN NULL ELSE _pk END, title = 'card ' || _pk"]

    /// Once the recipes are mapped: cards re-pointed to recipes without one, a card deleted, a
    /// card and a recipe swapping partners through NULL, a new pair.
    static let duringStageOne: [SQL] = [
        "UPDATE shop.card SET recipe_pk = 3 WHERE _pk = 1",
        "UPDATE shop.card SET recipe_pk = 6 WHERE _pk = 2",
        "DELETE FROM shop.card WHERE _pk = 4",
        "UPDATE shop.card SET recipe_pk = NULL WHERE _pk IN (7, 8)",
        "UPDATE shop.card SET recipe_pk = 8 WHERE _pk = 7",
        "UPDATE shop.card SET recipe_pk = 7 WHERE _pk = 8",
        "INSERT INTO shop.recipe (_pk, _entity, name) VALUES (100001, 'Recipe', 'hook recipe')",
        "INSERT INTO shop.card (_pk, _entity, title, recipe_pk) VALUES (100001, 'Card', 'hook card', 100001)",
    ]

    /// The concurrent writer, on other rows: new pairs, re-points (of old and new cards to
    /// recipes without one), deletes of cards, of a pair, retitled cards.
    static let concurrent: [SQL] = (0..<20).flatMap { i -> [SQL] in
        // `old` keeps its card; `old + 1` has none; `old + 2` keeps its card, not re-pointed.
        let key = 200_000 + i, old = 101 + 3 * i
        func raw(_ number: Int) -> SQL { "\(unsafeRaw: String(number))" }
        var writes: [SQL] = [
            "INSERT INTO shop.recipe (_pk, _entity, name) VALUES (\(raw(key)), 'Recipe', 'writer recipe \(unsafeRaw: String(i))')",
            "INSERT INTO shop.card (_pk, _entity, title, recipe_pk) VALUES (\(raw(key)), 'Card', 'writer card \(unsafeRaw: String(i))', \(raw(key)))",
            "UPDATE shop.card SET recipe_pk = \(raw(old + 1)) WHERE _pk = \(raw(old))",
        ]
        if i > 0 { writes.append("UPDATE shop.card SET recipe_pk = \(raw(old)) WHERE _pk = \(raw(key - 1))") }
        if i % 3 == 0 { writes.append("DELETE FROM shop.card WHERE _pk = \(raw(old + 2))") }
        if i % 4 == 1 {
            writes.append("DELETE FROM shop.card WHERE _pk = \(raw(old + 101))")
            writes.append("DELETE FROM shop.recipe WHERE _pk = \(raw(old + 101))")
        }
        if i % 5 == 2 { writes.append("UPDATE shop.card SET title = title || ' w' WHERE _pk = \(raw(old + 2))") }
        return writes
    }

    /// For the last round, under the write guard: a card re-pointed, one deleted.
    static let betweenRounds: [SQL] = [
        "UPDATE shop.card SET recipe_pk = 12 WHERE _pk = 10",
        "DELETE FROM shop.card WHERE _pk = 11",
    ]

    static func snapshot(_ schema: String, on connection: PostgresConnection) throws -> [[String?]] {
        try connection.execute("SELECT _pk, title, recipe_pk FROM \(ident: schema, "card") ORDER BY _pk").rows
            + connection.execute("SELECT _pk, name, card_title FROM \(ident: schema, "recipe") ORDER BY _pk").rows
    }

    static func offlineMigration(after writes: [SQL]) throws -> [[String?]] {
        var migrated: [[String?]] = []
        let model = try cards()
        try S.withStore(model) { connection in
            for write in pairs + writes { try connection.execute(write) }
            _ = try StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(mapping())]).apply()
            migrated = try snapshot(S.store, on: connection)
        }
        return migrated
    }

    @Test(arguments: [false, true])
    func recipesACardLeftOrReachedMeanwhileAreMappedAgain(streaming: Bool) throws {
        let model = try Self.cards()
        try S.withStore(model) { connection in
            for write in Self.pairs { try connection.execute(write) }
            var migrator = StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(Self.mapping())])
            migrator.forceStreaming = streaming
            let script = OnlineApplyScript(
                writer: try TwinWriter.script(sessionsLike: connection, Self.concurrent), first: "RecipeToRecipe", duringStageOne: Self.duringStageOne,
                last: "CardToCard", betweenRounds: Self.betweenRounds
            )
            _ = try script.apply(migrator, on: connection)
            #expect(try S.version(on: connection) == "Cards 2")
            #expect(try connection.execute("SELECT _pk, card_title FROM shop.recipe WHERE _pk IN (1, 3, 4, 10, 12) ORDER BY _pk").rows
                == [["1", nil], ["3", "card 1"], ["4", nil], ["10", nil], ["12", "card 10"]], "the recipes cards left and reached")
            #expect(try connection.execute("""
                SELECT count(*) AS n FROM shop.recipe AS r LEFT JOIN shop.card AS c ON c.recipe_pk = r._pk WHERE r.card_title IS DISTINCT FROM c.title
                """).int(0, "n") == 0, "every recipe bears its card's title as the cards end")
            let reference = try Self.offlineMigration(after: Self.duringStageOne + Self.concurrent + Self.betweenRounds)
            let online = try Self.snapshot(S.store, on: connection)
            TwinComparison.expectSameRows(online, reference)
            #expect(online.count > 500)
        }
    }

    /// Crashed once the recipes are mapped: the card triggers stay on the store and log the
    /// recipes cards leave until the resumed run maps them again, in the same log.
    @Test func aRunCrashedAfterTheRecipesResumesWithTheRecipesCardsLeftMeanwhile() throws {
        let model = try Self.cards()
        try S.withStore(model) { connection in
            for write in Self.pairs { try connection.execute(write) }
            let make = { (session: PostgresConnection) in
                StoreMigrator(connection: session, model: model, store: S.store, explicitMappings: [ExplicitMapping(Self.mapping())])
            }
            try Online.crashOnlineRun(after: "RecipeToRecipe", on: connection, make)
            #expect(try S.version(on: connection) == "Cards 1")
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_trigger WHERE tgname = \(OnlineCatchUp.pointedTrigger)").int(0, "n") == 1)
            for write in Self.duringStageOne + Self.betweenRounds { try connection.execute(write) }
            #expect(try connection.execute("""
                SELECT array_agg(DISTINCT pk ORDER BY pk)::text AS left FROM "shop~staging"._row_changes WHERE table_name = 'recipe' AND operation <> 'INSERT'
                """).value(0, "left") == "{1,2,4,7,8,10,11}", "the recipes the cards left, logged under the recipe table")

            var options = ApplyOptions()
            options.online = true
            var events: [ProgressEvent] = []
            _ = try make(connection).apply(options: options, onProgress: { events.append($0) })
            #expect(events.contains { $0.kind == .passFinished && $0.resumed }, "the passes of the first run were skipped")
            #expect(try S.version(on: connection) == "Cards 2")
            try Online.expectNoTriggersLeft(on: connection)
            let reference = try Self.offlineMigration(after: Self.duringStageOne + Self.betweenRounds)
            let online = try Self.snapshot(S.store, on: connection)
            TwinComparison.expectSameRows(online, reference)
        }
    }
}
