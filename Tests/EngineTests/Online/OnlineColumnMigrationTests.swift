import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 12: `apply --online` of columns rebuilt with their indexes and constraints, of number
/// conversions read as text, of values moved between sibling columns and of ordered links
/// moved into a join table, while the application writes; the migrated store equals an offline
/// migration of the same final data.
@Suite(integration) struct OnlineColumnMigrationTests {
    typealias S = MigratedStore
    typealias Online = OnlineMigrationTests

    /// The row the live store just took, with the same `_pk`, into the shadow store.
    static func insert(_ table: String, _ values: [(column: String, value: SQLValue)], writer: ConcurrentWriter, on connection: PostgresConnection) throws -> Int64 {
        let columns = values.map(\.column)
        let binds = SQL.joined(values.map { "\($0.value)" }, separator: ", ")
        let key = try connection.execute("INSERT INTO \(ident: writer.live, table) (\(idents: columns)) VALUES (\(binds)) RETURNING _pk")
        let pk = try #require(key.rows.first?.first.flatMap { $0 }.flatMap { Int64($0) })
        try connection.execute("INSERT INTO \(ident: writer.shadow, table) (\(idents: ["_pk"] + columns)) OVERRIDING SYSTEM VALUE VALUES (\(pk), \(binds))")
        return pk
    }

    /// The same statement on both stores (`store` names the table's schema).
    static func both(_ writer: ConcurrentWriter, on connection: PostgresConnection, _ statement: (_ store: String) -> SQL) throws {
        for store in [writer.live, writer.shadow] { try connection.execute(statement(store)) }
    }

    @Test func aWidenedColumnKeepsItsIndexesUniquenessConstraintsAndChecksUnderTheirNames() throws {
        let v1 = """
            Recipe: {attributes: {name: string, rating: int16, code: int16}, indexes: {byRating: [rating, name]}, uniquenessConstraints: [[code]]}
            Dessert: {attributes: {name: string}}
            Cake: {parent: Dessert, attributes: {layers: {type: int16, optional: false, default: 1}, sku: int16}, uniquenessConstraints: [[sku]]}
            """
        let model = try S.model([("v1", S.version(v1)), ("v2", S.version(v1.replacingOccurrences(of: "int16", with: "int32")))])
        try Online.migrateOnlineWhileWriting(model, tables: ["recipe", "dessert"], write: { writer, connection in
            let (recipe, dessert, number) = (writer.random(1...400), writer.random(1...700), writer.random(1...9000))
            switch writer.random(0...6) {
            case 0:
                // Unique codes: the negated key, never a sample value.
                let pk = try Self.insert("recipe", [("_entity", .text("Recipe")), ("name", .text("new")), ("rating", writer.value(number % 3 == 0 ? nil : number))], writer: writer, on: connection)
                try Self.both(writer, on: connection) { "UPDATE \(ident: $0, "recipe") SET code = -_pk WHERE _pk = \(pk)" }
            case 1, 2:
                try Self.both(writer, on: connection) {
                    "UPDATE \(ident: $0, "recipe") SET rating = \(writer.value(number % 4 == 0 ? nil : number)), code = CASE WHEN code IS NULL THEN -_pk END, name = name || '!' WHERE _pk = \(recipe)"
                }
            case 3:
                try Self.both(writer, on: connection) { "DELETE FROM \(ident: $0, "recipe") WHERE _pk = \(recipe)" }
            case 4:
                let pk = try Self.insert("dessert", [("_entity", .text("Cake")), ("name", .text("cake")), ("layers", .int(Int64(number % 50 + 1)))], writer: writer, on: connection)
                try Self.both(writer, on: connection) { "UPDATE \(ident: $0, "dessert") SET sku = -_pk WHERE _pk = \(pk)" }
            case 5:
                try Self.both(writer, on: connection) {
                    "UPDATE \(ident: $0, "dessert") SET layers = \(number % 50 + 1), sku = CASE WHEN sku IS NULL THEN -_pk END WHERE _pk = \(dessert) AND _entity = 'Cake'"
                }
            default:
                try Self.both(writer, on: connection) { "DELETE FROM \(ident: $0, "dessert") WHERE _pk = \(dessert)" }
            }
        })
    }

    /// The application and the migrating session both print floats with 15 digits
    /// (`extra_float_digits = 0`), the offline step in their shortest exact form: the trigger
    /// (its function pins the setting), the checks of the values and the batches (`SET LOCAL`)
    /// still convert as the offline step does. A 15-digit text would lose the last digits of
    /// `k / 3` and fail the check of `0.30000000000000004` as a double.
    @Test func conversionsThatReadFloatsAsTextGiveTheOfflineResultWhateverTheSessionsPrintSetting() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, rating: double, price: decimal}}")),
            ("v2", S.version("Recipe: {attributes: {name: string, rating: decimal, price: double}}")),
        ])
        // Texts that PostgreSQL reads the same into a double and a decimal column, so that
        // writes before and after the swap of a column are the same in both stores.
        let rating = { (writer: ConcurrentWriter) in SQLValue.text(String(Double(3 * writer.random(1...3000) + 1) / 3)) }
        let price = { (writer: ConcurrentWriter) in SQLValue.text(String(Double(writer.random(1...3000)) / 7 + 0.1)) }
        try Online.migrateOnlineWhileWriting(model, tables: ["recipe"], prepare: { connection in
            try connection.transaction {
                try connection.execute("SET LOCAL extra_float_digits = 1")
                for store in [S.store, Online.shadow] {
                    try connection.execute("UPDATE \(ident: store, "recipe") SET rating = _pk / 3.0::float8, price = ((_pk / 7.0::float8) + 0.1)::text::numeric")
                }
            }
            let digits = try connection.execute("SELECT (1 / 3.0::float8)::text AS third, '0.30000000000000004'::float8::text AS sum")
            try connection.execute("SET extra_float_digits = 0")
            let fewer = try connection.execute("SELECT (1 / 3.0::float8)::text AS third, '0.30000000000000004'::float8::text AS sum")
            #expect(digits.rows != fewer.rows, "the setting makes no difference here: the test would prove nothing")
        }, write: { writer, connection in
            try connection.execute("SET LOCAL extra_float_digits = 0")
            let recipe = writer.random(1...400)
            switch writer.random(0...4) {
            case 0:
                _ = try Self.insert("recipe", [("_entity", .text("Recipe")), ("name", .text("new")), ("rating", rating(writer)), ("price", price(writer))], writer: writer, on: connection)
            case 1, 2:
                let (r, p) = (rating(writer), price(writer))
                try Self.both(writer, on: connection) { "UPDATE \(ident: $0, "recipe") SET rating = \(r), price = \(p), name = name || '!' WHERE _pk = \(recipe)" }
            default:
                try Self.both(writer, on: connection) { "DELETE FROM \(ident: $0, "recipe") WHERE _pk = \(recipe)" }
            }
        })
    }

    /// Sibling columns (docs/store-format.md): Post's likeCount becomes a bigint as
    /// ReaderPost's is, so the two share a column again: Post's values are copied into it and
    /// their integer column goes at the switch-over.
    @Test func valuesCopiedIntoTheColumnSiblingsShareAgainKeepEveryWrite() throws {
        let posts = { (post: String) in
            S.version("""
                BasePost: {abstract: true, attributes: {title: string}}
                Post: {parent: BasePost, attributes: {likeCount: \(post)}}
                ReaderPost: {parent: BasePost, attributes: {likeCount: int64}}
                Note: {parent: BasePost, attributes: {likeCount: string}}
                """)
        }
        let model = try S.model([("v1", posts("int32")), ("v2", posts("int64"))])
        try Online.migrateOnlineWhileWriting(model, tables: ["base_post"], write: { writer, connection in
            let (post, count) = (writer.random(1...1000), Int64(writer.random(0...5000)))
            let value: SQLValue = count % 5 == 0 ? .null : .int(count)
            switch writer.random(0...5) {
            case 0:
                _ = try Self.insert("base_post", [("_entity", .text("Post")), ("title", .text("new")), ("like_count_integer", value)], writer: writer, on: connection)
            case 1:
                _ = try Self.insert("base_post", [("_entity", .text("ReaderPost")), ("title", .text("new")), ("like_count_bigint", value)], writer: writer, on: connection)
            case 2, 3:
                try Self.both(writer, on: connection) {
                    "UPDATE \(ident: $0, "base_post") SET like_count_integer = \(value), title = title || '!' WHERE _pk = \(post) AND _entity = 'Post'"
                }
            case 4:
                try Self.both(writer, on: connection) { "UPDATE \(ident: $0, "base_post") SET title = title || '?' WHERE _pk = \(post)" }
            default:
                try Self.both(writer, on: connection) { "DELETE FROM \(ident: $0, "base_post") WHERE _pk = \(post)" }
            }
        })
    }

    /// Cuisine.recipes, ordered, stored by Recipe's to-one with its order column, becomes a
    /// many-to-many whose join table keeps that order, and Recipe.cuisines becomes ordered (each
    /// recipe's one cuisine first).
    @Test func orderedLinksMovedIntoAJoinTableKeepEveryWriteAndItsPosition() throws {
        let model = try S.model([
            ("v1", S.version("""
                Cuisine: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: cuisine, toMany: true, ordered: true}}}
                Recipe: {attributes: {name: string}, relationships: {cuisine: {destination: Cuisine, inverse: recipes}}}
                """)),
            ("v2", S.version("""
                Cuisine: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: cuisines, toMany: true, ordered: true}}}
                Recipe: {attributes: {name: string}, relationships: {cuisines: {destination: Cuisine, inverse: recipes, toMany: true, ordered: true, renamingIdentifier: cuisine}}}
                """)),
        ])
        let order = try #require(StoreLayout(version: model.versions[0], schema: S.store).table(named: "recipe")?.columns.first {
            if case .order = $0.role { true } else { false }
        }).name
        try Online.migrateOnlineWhileWriting(model, tables: ["cuisine", "recipe"], write: { writer, connection in
            let (recipe, cuisine, position) = (writer.random(1...400), writer.random(1...330), writer.random(0...20))
            let link: SQLValue = writer.random(0...3) == 0 ? .null : .int(Int64(cuisine))
            switch writer.random(0...6) {
            case 0:
                let exists = try connection.execute("SELECT 1 FROM \(ident: writer.live, "cuisine") WHERE _pk = \(cuisine)").rows.isEmpty == false
                _ = try Self.insert("recipe", [("_entity", .text("Recipe")), ("name", .text("new")), ("cuisine_pk", exists ? link : .null), (order, .int(Int64(position)))], writer: writer, on: connection)
            case 1, 2:
                try Self.both(writer, on: connection) {
                    "UPDATE \(ident: $0, "recipe") SET cuisine_pk = (SELECT _pk FROM \(ident: $0, "cuisine") WHERE _pk = \(link)), \(ident: order) = \(position) WHERE _pk = \(recipe)"
                }
            case 3:
                try Self.both(writer, on: connection) { "UPDATE \(ident: $0, "recipe") SET \(ident: order) = \(position) WHERE _pk = \(recipe)" }
            case 4:
                try Self.both(writer, on: connection) { "DELETE FROM \(ident: $0, "recipe") WHERE _pk = \(recipe)" }
            case 5:
                try Self.both(writer, on: connection) { "DELETE FROM \(ident: $0, "cuisine") WHERE _pk = \(cuisine)" }
            default:
                _ = try Self.insert("cuisine", [("_entity", .text("Cuisine")), ("name", .text("fusion"))], writer: writer, on: connection)
            }
        })
    }
}
