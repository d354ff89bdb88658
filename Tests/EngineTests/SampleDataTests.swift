import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// The row generator fills any model version, so migrations can be proven on stores with rows.
@Suite(integration) struct SampleDataTests {
    static func createAndFill(_ model: VersionedModel, version: String, store: String, rows: Int, on connection: PostgresConnection) throws {
        _ = try StoreMigrator(connection: connection, model: model, store: store, targetVersion: version).apply()
        try connection.transaction {
            for statement in try SampleData.statements(for: model.version(named: version)!, schema: store, rowsPerEntity: rows) {
                try connection.execute(statement)
            }
        }
    }

    @Test func theLibraryIsFilledHonoringTypesOptionalityAndRelationships() throws {
        let model = try StoreCreationTests.library()
        try TestDatabase.withFreshConnection { connection in
            try Self.createAndFill(model, version: "Library 1", store: "library", rows: 200, on: connection)
            let perEntity = try connection.execute("SELECT _entity, count(*) AS n FROM library.item GROUP BY _entity ORDER BY _entity")
            #expect(perEntity.rows == [["Book", "200"], ["Magazine", "200"]])
            #expect(try rowCount(schema: "library", table: "author", on: connection) == 200)
            #expect(try rowCount(schema: "library", table: "all_types", on: connection) == 200)
            // Every book has its required author; optional links are mostly set.
            #expect(try connection.execute("SELECT count(*) AS n FROM library.item WHERE _entity = 'Book' AND author_pk IS NULL").int(0, "n") == 0)
            let shelved = try connection.execute("SELECT count(shelf_pk) AS n FROM library.item").int(0, "n")!
            #expect(shelved > 300 && shelved < 400)
            // Optional attributes are NULL on every fifth row only.
            #expect(try connection.execute("SELECT count(*) AS n FROM library.all_types WHERE int32_value IS NULL").int(0, "n") == 40)
            #expect(try rowCount(schema: "library", table: "book__tags", on: connection) == 400)
            #expect(try rowCount(schema: "library", table: "tag__related_tags", on: connection) == 400)
            let orders = try connection.execute("SELECT min(related_tags_order) AS lo, max(related_tags_order) AS hi FROM library.tag__related_tags")
            #expect(orders.rows.first == ["0", "1"])
            #expect(try connection.execute("SELECT count(*) AS n FROM library.item WHERE shelf_pk IS NOT NULL AND shelf_order IS NULL").int(0, "n") == 0)
        }
    }

    /// Real apps' current versions: the store is created and filled without a constraint failing.
    @Test(arguments: Corpus.bundles)
    func theCurrentVersionOfEveryCorpusBundleIsCreatedAndFilled(bundle: Corpus.Bundle) throws {
        let model = try ModelLoader.loadValidated(path: bundle.fullPath)
        try TestDatabase.withFreshConnection { connection in
            let store = "corpus_store"
            try Self.createAndFill(model, version: model.currentVersionName, store: store, rows: 20, on: connection)
            let version = model.currentVersion
            for root in version.rootEntities {
                let concrete = version.hierarchy(of: root).filter { !$0.isAbstract }.count
                #expect(try rowCount(schema: store, table: StoreNaming.tableName(entity: root.name), on: connection) == 20 * concrete, "\(root.name)")
            }
        }
    }
}
