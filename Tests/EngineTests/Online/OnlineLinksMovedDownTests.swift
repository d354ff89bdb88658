import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// `apply --online` of a parent's many-to-many moved down to two sub-entities (Dessert.tags
/// becomes Cake.tags and Pie.tags): both new join tables read Dessert's, each for its own
/// entity's rows, while the application adds and removes links of cakes, pies and desserts and
/// deletes either; the migrated store equals an offline migration of the same final data.
@Suite(integration) struct OnlineLinksMovedDownTests {
    typealias S = MigratedStore
    typealias Columns = OnlineColumnMigrationTests

    @Test func eachSubEntitysLinksAreReadFromItsParentsJoinTableWhileWritten() throws {
        let model = try LinksMovedDownMigrationTests.model(inverse: true)
        try GuardedWriter.withShadowedStore(model, store: S.store, shadow: OnlineMigrationTests.shadow, write: { writer, connection in
            let (dessert, tag) = (writer.random(1...1000), writer.random(1...360))
            switch writer.random(0...6) {
            case 0, 1, 2:
                try writer.both({
                    """
                    INSERT INTO \(ident: $0, "dessert__tags") (dessert_pk, tags_pk) SELECT d._pk, t._pk FROM \(ident: $0, "dessert") d, \(ident: $0, "tag") t \
                    WHERE d._pk = \(dessert) AND t._pk = \(tag) ON CONFLICT DO NOTHING
                    """
                }, on: connection)
            case 3:
                try writer.both({ "DELETE FROM \(ident: $0, "dessert__tags") WHERE dessert_pk = \(dessert) AND tags_pk = (SELECT min(tags_pk) FROM \(ident: $0, "dessert__tags") WHERE dessert_pk = \(dessert))" }, on: connection)
            case 4:
                try writer.both({ "DELETE FROM \(ident: $0, "dessert") WHERE _pk = \(dessert)" }, on: connection)
            case 5:
                let entity = ["Cake", "Pie", "Dessert"][writer.random(0...2)]
                try Columns.insert("dessert", [("_entity", .text(entity)), ("name", .text("new"))], writer: writer, on: connection)
            default:
                try writer.both({ "DELETE FROM \(ident: $0, "tag") WHERE _pk = \(tag)" }, on: connection)
            }
        }) { connection, writer, _ in
            try OnlineRowMoveMigrationTests.migrateWhileWriting(model, writer: writer, allowDataLoss: true, on: connection)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
        }
    }
}
