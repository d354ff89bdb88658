import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// The Hierarchies fixture (YAML and Xcode): sibling sub-entities declaring the same property,
/// a relationship whose inverse names another back, a relationship that is its own inverse.
/// Each store is created, filled, and read back (docs/store-format.md).
@Suite(integration) struct HierarchyFixtureTests {
    static let fixtures = [
        StoreCreationTests.repository + "/Tests/Fixtures/Hierarchies",
        StoreCreationTests.repository + "/Tests/ObjectModelTests/Fixtures/Hierarchies.xcdatamodeld",
    ]

    /// A store filled at Hierarchies 1.
    static func withFilledStore(_ path: String, _ body: (PostgresConnection, VersionedModel) throws -> Void) throws {
        let model = try ModelLoader.loadValidated(path: path)
        try TestDatabase.withFreshConnection { connection in
            try SampleDataTests.createAndFill(model, version: "Hierarchies 1", store: "gallery", rows: 40, on: connection)
            try body(connection, model)
        }
    }

    @Test(arguments: fixtures) func siblingDeclarationsShareOrSplitTheirColumns(path: String) throws {
        try Self.withFilledStore(path) { connection, _ in
            let columns = try connection.execute("""
                SELECT column_name || ' ' || data_type AS c FROM information_schema.columns
                WHERE table_schema = 'gallery' AND table_name = 'base_post' ORDER BY ordinal_position
                """).rows.map { $0[0]! }
            #expect(columns == [
                "_pk bigint", "_entity text", "title text", "like_count_integer integer", "raw_group_uid bytea", "summary text",
                "author_artist_pk bigint", "like_count_text text", "author_image_pk bigint",
            ])
            // Each sibling's rows hold their own values; the shared column holds both. (Post's
            // default of likeCount is its column's DEFAULT, so ReaderPost rows get it too, as
            // any sub-entity's default does.)
            let filled = try connection.execute("""
                SELECT _entity, count(like_count_integer) AS i, count(like_count_text) AS t, count(raw_group_uid) AS r,
                       count(author_artist_pk) > 30 AS a, count(author_image_pk) > 30 AS m
                FROM gallery.base_post GROUP BY _entity ORDER BY _entity
                """).rows
            #expect(filled == [["Post", "40", "0", "32", "t", "f"], ["ReaderPost", "40", "32", "40", "f", "t"]])
            // ReaderPost.summary is required, Post.summary is not: one check scoped to ReaderPost.
            try connection.execute("INSERT INTO gallery.base_post (_entity, title, like_count_integer) VALUES ('Post', 't', 1)")
            #expect(throws: PostgresError.self) {
                try connection.execute("INSERT INTO gallery.base_post (_entity, title, raw_group_uid) VALUES ('ReaderPost', 't', '\\x00')")
            }
        }
    }

    @Test(arguments: fixtures) func aRelationshipWhoseInverseNamesAnotherHasItsOwnColumn(path: String) throws {
        try Self.withFilledStore(path) { connection, _ in
            // Image.artist has a column of its own; the Artist.thumbnail / Image.thumbnailOf pair
            // is one one-to-one column on the side that sorts first.
            let columns = { (table: String) in
                try connection.execute("""
                    SELECT column_name AS c FROM information_schema.columns
                    WHERE table_schema = 'gallery' AND table_name = \(table) ORDER BY ordinal_position
                    """).rows.map { $0[0]! }
            }
            #expect(try columns("image") == ["_pk", "_entity", "caption", "artist_pk"])
            #expect(try columns("artist") == ["_pk", "_entity", "name", "thumbnail_pk"])
            let links = try connection.execute("SELECT count(artist_pk) > 30 AS a, (SELECT count(thumbnail_pk) > 30 FROM gallery.artist) AS t FROM gallery.image")
            #expect(links.rows == [["t", "t"]])
            // The two relationships' links are independent: setting every Image.artist leaves
            // every Artist.thumbnail as it was.
            let thumbnails = try connection.execute("SELECT _pk, thumbnail_pk FROM gallery.artist ORDER BY _pk").rows
            try connection.execute("UPDATE gallery.image SET artist_pk = (SELECT max(_pk) FROM gallery.artist)")
            #expect(try connection.execute("SELECT _pk, thumbnail_pk FROM gallery.artist ORDER BY _pk").rows == thumbnails)
            // Without an inverse, deleting the artist clears the links that point to it.
            try connection.execute("DELETE FROM gallery.artist WHERE _pk = (SELECT max(_pk) FROM gallery.artist)")
            #expect(try connection.execute("SELECT count(artist_pk) AS n FROM gallery.image").int(0, "n") == 0)
        }
    }

    @Test(arguments: fixtures) func aRelationshipThatIsItsOwnInverseHasOneJoinTableWithOneOrder(path: String) throws {
        try Self.withFilledStore(path) { connection, _ in
            let columns = try connection.execute("""
                SELECT column_name AS c FROM information_schema.columns
                WHERE table_schema = 'gallery' AND table_name = 'artist__friends' ORDER BY ordinal_position
                """).rows.map { $0[0]! }
            #expect(columns == ["artist_pk", "friends_pk", "friends_order"])
            #expect(try rowCount(schema: "gallery", table: "artist__friends", on: connection) == 80)
            let orders = try connection.execute("SELECT min(friends_order) AS lo, max(friends_order) AS hi FROM gallery.artist__friends")
            #expect(orders.rows.first == ["0", "1"])
        }
    }

    @Test(arguments: fixtures) func movingASharedPropertyUpAndAddingASiblingKeepsEveryValue(path: String) throws {
        try Self.withFilledStore(path) { connection, model in
            let columns = ["title", "summary", "like_count_integer", "like_count_text", "raw_group_uid", "author_artist_pk", "author_image_pk"]
            let before = try connection.execute("SELECT _pk, _entity, \(idents: columns) FROM gallery.base_post ORDER BY _pk").rows
            #expect(before.contains { $0[1] == "ReaderPost" && $0[3] != nil } && before.contains { $0[1] == "Post" && $0[3] != nil })
            let report = try StoreMigrator(connection: connection, model: model, store: "gallery").apply()
            #expect(report.appliedSteps.map(\.step.kind) == [.lightweight])
            #expect(try connection.execute("SELECT _pk, _entity, \(idents: columns) FROM gallery.base_post ORDER BY _pk").rows == before)
            // Page shares like_count_integer; summary is optional for everyone now.
            try connection.execute("INSERT INTO gallery.base_post (_entity, title, like_count_integer, raw_group_uid) VALUES ('Page', 'p', 3, NULL), ('ReaderPost', 'r', NULL, '\\x00')")
            #expect(try StoreMigrator(connection: connection, model: model, store: "gallery").plan().isUpToDate)
        }
    }
}
