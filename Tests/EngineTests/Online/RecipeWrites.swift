import Foundation
import Testing
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// The application during `apply --online` of the online test model: random inserts, updates
/// and deletes on every table, each transaction written to the live store and, identically, to
/// a shadow copy of it that stays at the first version (a `TwinWriter` with the `concurrent`
/// rules). Migrating the shadow offline afterwards gives what the live store must hold: every
/// committed write, no deleted row.
enum RecipeWrites {
    static func writer(url: String, live: String, shadow: String) -> TwinWriter {
        TwinWriter(url: url, live: live, twin: shadow, rules: .concurrent, write: writeOnce)
    }

    private static func value(_ number: Int?) -> SQLValue { number.map { .int(Int64($0)) } ?? .null }

    /// One write, the same in both stores: keys are drawn over the whole table (rows the
    /// backfill passed and rows it has not reached), new keys taken from the live store.
    private static func writeOnce(_ writer: TwinWriter, on connection: PostgresConnection) throws {
        let live = writer.live, shadow = writer.twin, random = writer.random
        let recipe = random(1...420), cuisine = random(1...330), ingredient = random(1...420), dessert = random(1...660)
        let rating: Int? = random(0...2) == 0 ? nil : random(1...5)
        let link: Int? = random(0...3) == 0 ? nil : cuisine
        switch random(0...10) {
        case 0:
            let key = try connection.execute("INSERT INTO \(ident: live, "recipe") (_entity, name, rating, cuisine_pk) VALUES ('Recipe', 'new', \(value(rating)), (SELECT _pk FROM \(ident: live, "cuisine") WHERE _pk = \(link ?? 0))) RETURNING _pk, cuisine_pk")
            try mirror(writer, "recipe", key: key, columns: "_entity, name, rating, cuisine_pk", values: "'Recipe', 'new', \(rating.map(String.init) ?? "NULL"), \(key.rows[0][1] ?? "NULL")", on: connection)
        case 1, 2:
            for store in [live, shadow] {
                try connection.execute("UPDATE \(ident: store, "recipe") SET rating = \(value(rating)), name = name || '!', cuisine_pk = (SELECT _pk FROM \(ident: store, "cuisine") WHERE _pk = \(link ?? 0)) WHERE _pk = \(recipe)")
            }
        case 3:
            for store in [live, shadow] { try connection.execute("DELETE FROM \(ident: store, "recipe") WHERE _pk = \(recipe)") }
        case 4:
            let key = try connection.execute("INSERT INTO \(ident: live, "ingredient") (_entity, name, amount, recipe_pk) SELECT 'Ingredient', 'salt', '1 g', _pk FROM \(ident: live, "recipe") WHERE _pk = \(recipe) RETURNING _pk, recipe_pk")
            if !key.rows.isEmpty {
                try mirror(writer, "ingredient", key: key, columns: "_entity, name, amount, recipe_pk", values: "'Ingredient', 'salt', '1 g', \(key.rows[0][1] ?? "NULL")", on: connection)
            }
        case 5:
            for store in [live, shadow] { try connection.execute("UPDATE \(ident: store, "ingredient") SET amount = amount || '+', grams = \(recipe % 300) WHERE _pk = \(ingredient)") }
        case 6:
            for store in [live, shadow] { try connection.execute("DELETE FROM \(ident: store, "ingredient") WHERE _pk = \(ingredient)") }
        case 7:
            // The first version's application: a Cake without layers, said explicitly.
            let key = try connection.execute("INSERT INTO \(ident: live, "dessert") (_entity, name, layers) VALUES ('Cake', 'cake', NULL) RETURNING _pk")
            try mirror(writer, "dessert", key: key, columns: "_entity, name, layers", values: "'Cake', 'cake', NULL", on: connection)
        case 8:
            for store in [live, shadow] { try connection.execute("UPDATE \(ident: store, "dessert") SET layers = NULL, name = 'plain' WHERE _pk = \(dessert)") }
        case 9:
            for store in [live, shadow] { try connection.execute("DELETE FROM \(ident: store, "dessert") WHERE _pk = \(dessert)") }
        default:
            if random(0...4) == 0 {
                for store in [live, shadow] { try connection.execute("DELETE FROM \(ident: store, "cuisine") WHERE _pk = \(cuisine)") }
            } else {
                let key = try connection.execute("INSERT INTO \(ident: live, "cuisine") (_entity, name) VALUES ('Cuisine', 'fusion') RETURNING _pk")
                try mirror(writer, "cuisine", key: key, columns: "_entity, name", values: "'Cuisine', 'fusion'", on: connection)
            }
        }
    }

    /// The row the live store just took, with the same `_pk`, into the shadow store.
    private static func mirror(_ writer: TwinWriter, _ table: String, key: QueryResult, columns: String, values: String, on connection: PostgresConnection) throws {
        guard let pk = key.rows.first?.first.flatMap({ $0 }) else { return }
        try connection.execute("INSERT INTO \(ident: writer.twin, table) (_pk, \(unsafeRaw: columns)) OVERRIDING SYSTEM VALUE VALUES (\(unsafeRaw: pk), \(unsafeRaw: values))")
    }
}
