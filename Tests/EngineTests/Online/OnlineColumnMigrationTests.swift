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
/// Proves Planning/Changes: AlterColumnType, ClearValues, ShortestFloatText, CopyColumnValues,
/// FillJoinTable.
@Suite(integration) struct OnlineColumnMigrationTests {
    typealias S = MigratedStore
    typealias Online = OnlineMigrationTests

    /// The store and its shadow at v1 (`prepare` runs then, on the migrating session);
    /// `apply --online` while `write` writes both; the live store then equals the shadow
    /// migrated offline.
    static func migrateOnlineWhileWriting(
        _ model: VersionedModel, prepare: (PostgresConnection) throws -> Void = { _ in }, write: @escaping TwinWriter.Write,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Online.shadow, write: write) { connection, writer, _ in
            try prepare(connection)
            try OnlineRowMoveMigrationTests.migrateWhileWriting(model, writer: writer, on: connection, sourceLocation: sourceLocation)
            try connection.execute("RESET ALL")  // what `prepare` set
            try Online.expectSameAsOfflineMigrationOfShadow(model, on: connection, sourceLocation: sourceLocation)
        }
    }

    /// A row inserted into both stores with the same `_pk`: `values` bound in column order.
    static func insert(_ table: String, _ values: [(column: String, value: SQLValue)], writer: TwinWriter, on connection: PostgresConnection) throws {
        try writer.insert(into: table, columns: values.map(\.column), values: { _ in SQL.joined(values.map { "\($0.value)" }, separator: ", ") }, on: connection)
    }

    @Test func aWidenedColumnKeepsItsIndexesUniquenessConstraintsAndChecksUnderTheirNames() throws {
        let v1 = """
            Recipe: {attributes: {name: string, rating: int16, code: int16}, indexes: {byRating: [rating, name]}, uniquenessConstraints: [[code]]}
            Dessert: {attributes: {name: string}}
            Cake: {parent: Dessert, attributes: {layers: {type: int16, optional: false, default: 1}, sku: int16}, uniquenessConstraints: [[sku]]}
            """
        let model = try S.model([("v1", S.version(v1)), ("v2", S.version(v1.replacingOccurrences(of: "int16", with: "int32")))])
        try Self.migrateOnlineWhileWriting(model, write: { writer, connection in
            let (recipe, dessert, number) = (writer.random(1...400), writer.random(1...700), writer.random(1...9000))
            switch writer.random(0...6) {
            case 0:
                // Unique codes: the negated key, never a sample value.
                let rating: SQLValue = number % 3 == 0 ? .null : .int(Int64(number))
                try Self.insert("recipe", [("_entity", .text("Recipe")), ("name", .text("new")), ("rating", rating)], writer: writer, on: connection)
                try writer.both({ "UPDATE \(ident: $0, "recipe") SET code = -_pk WHERE _pk = (SELECT max(_pk) FROM \(ident: $0, "recipe"))" }, on: connection)
            case 1, 2:
                try writer.both({
                    "UPDATE \(ident: $0, "recipe") SET rating = \(number % 4 == 0 ? SQLValue.null : .int(Int64(number))), code = CASE WHEN code IS NULL THEN -_pk END, name = name || '!' WHERE _pk = \(recipe)"
                }, on: connection)
            case 3:
                try writer.delete(from: "recipe", key: recipe, on: connection)
            case 4:
                try Self.insert("dessert", [("_entity", .text("Cake")), ("name", .text("cake")), ("layers", .int(Int64(number % 50 + 1)))], writer: writer, on: connection)
                try writer.both({ "UPDATE \(ident: $0, "dessert") SET sku = -_pk WHERE _pk = (SELECT max(_pk) FROM \(ident: $0, "dessert"))" }, on: connection)
            case 5:
                try writer.both({
                    "UPDATE \(ident: $0, "dessert") SET layers = \(number % 50 + 1), sku = CASE WHEN sku IS NULL THEN -_pk END WHERE _pk = \(dessert) AND _entity = 'Cake'"
                }, on: connection)
            default:
                try writer.delete(from: "dessert", key: dessert, on: connection)
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
        let rating = { (writer: TwinWriter) in SQLValue.text(String(Double(3 * writer.random(1...3000) + 1) / 3)) }
        let price = { (writer: TwinWriter) in SQLValue.text(String(Double(writer.random(1...3000)) / 7 + 0.1)) }
        try Self.migrateOnlineWhileWriting(model, prepare: { connection in
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
                try Self.insert("recipe", [("_entity", .text("Recipe")), ("name", .text("new")), ("rating", rating(writer)), ("price", price(writer))], writer: writer, on: connection)
            case 1, 2:
                let (r, p) = (rating(writer), price(writer))
                try writer.both({ "UPDATE \(ident: $0, "recipe") SET rating = \(r), price = \(p), name = name || '!' WHERE _pk = \(recipe)" }, on: connection)
            default:
                try writer.delete(from: "recipe", key: recipe, on: connection)
            }
        })
    }

    /// Posts whose sibling entities declare likeCount (docs/store-format.md); Post's is indexed.
    static func posts(post: String, reader: String) -> String {
        S.version("""
            BasePost: {abstract: true, attributes: {title: string}}
            Post: {parent: BasePost, attributes: {likeCount: \(post)}, indexes: {byLikes: [likeCount]}}
            ReaderPost: {parent: BasePost, attributes: {likeCount: \(reader)}}
            Note: {parent: BasePost, attributes: {likeCount: string}}
            """)
    }

    /// The first version's application writing posts: likeCount in the column of each entity
    /// (and any other columns named with it, which get the same value).
    static func writePosts(columns: [String: [String]]) -> TwinWriter.Write {
        { writer, connection in
            let (post, count) = (writer.random(1...1000), Int64(writer.random(0...5000)))
            let value: SQLValue = count % 5 == 0 ? .null : .int(count)
            let entity = ["Post", "ReaderPost"][writer.random(0...1)]
            let written = columns[entity]!
            switch writer.random(0...4) {
            case 0:
                try Self.insert("base_post", [("_entity", .text(entity)), ("title", .text("new"))] + written.map { ($0, value) }, writer: writer, on: connection)
            case 1, 2:
                let set = SQL.joined(written.map { "\(ident: $0) = \(value)" }, separator: ", ")
                try writer.both({
                    "UPDATE \(ident: $0, "base_post") SET \(set), title = title || '!' WHERE _pk = \(post) AND _entity = \(entity)"
                }, on: connection)
            case 3:
                try writer.both({ "UPDATE \(ident: $0, "base_post") SET title = title || '?' WHERE _pk = \(post)" }, on: connection)
            default:
                try writer.delete(from: "base_post", key: post, on: connection)
            }
        }
    }

    /// Post's likeCount becomes a bigint as ReaderPost's is, so the two share a column again:
    /// Post's values are copied into it, and their integer column goes at the switch-over.
    @Test func valuesCopiedIntoTheColumnSiblingsShareAgainKeepEveryWrite() throws {
        let model = try S.model([("v1", Self.posts(post: "int32", reader: "int64")), ("v2", Self.posts(post: "int64", reader: "int64"))])
        try Self.migrateOnlineWhileWriting(model, write: Self.writePosts(columns: ["Post": ["like_count_integer"], "ReaderPost": ["like_count_bigint"]]))
    }

    /// The shared column split: ReaderPost's likeCount becomes a bigint, so its values are
    /// copied out of the integer column Post keeps, and that column is built anew without them
    /// (the application reads them there until the switch-over), with Post's index.
    @Test func valuesCopiedOutOfASharedColumnAndClearedThereKeepEveryWrite() throws {
        let model = try S.model([("v1", Self.posts(post: "int32", reader: "int32")), ("v2", Self.posts(post: "int32", reader: "int64"))])
        try Self.migrateOnlineWhileWriting(model, write: Self.writePosts(columns: ["Post": ["like_count_integer"], "ReaderPost": ["like_count_integer"]]))
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
        try Self.migrateOnlineWhileWriting(model, write: OnlinePositionMigrationTests.writeCuisineLinks(order: order))
    }
}
