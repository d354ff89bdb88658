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
/// Proves Planning/Changes: FillJoinTable, DropTables.
@Suite(integration) struct OnlineLinksMovedDownTests {
    typealias S = MigratedStore
    typealias Columns = OnlineColumnMigrationTests

    @Test func eachSubEntitysLinksAreReadFromItsParentsJoinTableWhileWritten() throws {
        let model = try LinksMovedDownMigrationTests.model(inverse: true)
        let write = TwinWriter.writeLinks(
            in: "dessert__tags", owner: .init(table: "dessert", column: "dessert_pk", keys: 1...1000), target: .init(table: "tag", column: "tags_pk", keys: 1...360)
        ) { writer, connection in
            let entity = ["Cake", "Pie", "Dessert"][writer.random(0...2)]
            try Columns.insert("dessert", [("_entity", .text(entity)), ("name", .text("new"))], writer: writer, on: connection)
        }
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: OnlineMigrationTests.shadow, write: write) { connection, writer, _ in
            try OnlineRowMoveMigrationTests.migrateWhileWriting(model, writer: writer, allowDataLoss: true, on: connection)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
        }
    }
}
