import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import Testing
import TestSupport
@testable import Engine

/// `fleet apply`'s survey reads each store's catalog fingerprint before its catalog; under the
/// store's lock, an unchanged fingerprint stands for the drift check's catalog read, and a
/// changed one sends the store through the full check.
@Suite(integration) struct CatalogFingerprintTests {
    typealias S = MigratedStore

    static func model() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("""
                Maker: {attributes: {name: {type: string, optional: false}}, relationships: {products: {destination: Product, toMany: true, inverse: maker}}}
                Product: {attributes: {name: {type: string, optional: false}, rating: int32}, relationships: {maker: {destination: Maker, inverse: products}}}
                """)),
            ("v2", S.version("""
                Maker: {attributes: {name: {type: string, optional: false}}, relationships: {products: {destination: Product, toMany: true, inverse: maker}}}
                Product: {attributes: {name: {type: string, optional: false}, rating: int32, notes: string}, relationships: {maker: {destination: Maker, inverse: products}}}
                """)),
        ])
    }

    func fingerprint(on connection: PostgresConnection) throws -> String {
        try #require(try CatalogFingerprint.read(schemas: [S.store, "no_such_schema"], on: connection)[S.store])
    }

    @Test("the fingerprint changes with every kind of DDL the drift check reads, and not with ANALYZE, rows or a rolled-back change")
    func fingerprintFollowsTheCatalog() throws {
        try S.withStore(try Self.model(), rows: 20) { connection in
            let product = "\(quoteIdentifier(S.store)).\(quoteIdentifier("product"))"
            var last = try fingerprint(on: connection)
            #expect(try CatalogFingerprint.read(schemas: ["no_such_schema"], on: connection).isEmpty)

            for unchanging in [
                "ANALYZE \(product)", "INSERT INTO \(product) (_entity, name) VALUES ('Product', 'extra')", "VACUUM \(product)",
                "BEGIN; ALTER TABLE \(product) ADD COLUMN ghost text; ROLLBACK",
            ] {
                try connection.execute(SQL(unsafeRaw: unchanging))
                #expect(try fingerprint(on: connection) == last, "\(unchanging)")
            }
            for change in [
                "ALTER TABLE \(product) ADD COLUMN extra text", "ALTER TABLE \(product) ALTER COLUMN rating SET DEFAULT 3",
                "ALTER TABLE \(product) ALTER COLUMN rating DROP DEFAULT", "ALTER TABLE \(product) ALTER COLUMN name DROP NOT NULL",
                "ALTER TABLE \(product) ALTER COLUMN rating TYPE bigint", "ALTER TABLE \(product) RENAME COLUMN extra TO more",
                "ALTER TABLE \(product) ADD CONSTRAINT positive CHECK (rating > 0)", "ALTER TABLE \(product) DROP CONSTRAINT positive",
                "CREATE INDEX by_rating ON \(product) (rating)", "ALTER INDEX \(quoteIdentifier(S.store)).by_rating RENAME TO by_stars",
                "ALTER TABLE \(quoteIdentifier(S.store)).maker RENAME TO brand", "ALTER TABLE \(product) DROP COLUMN more",
            ] {
                try connection.execute(SQL(unsafeRaw: change))
                let now = try fingerprint(on: connection)
                #expect(now != last, "\(change)")
                last = now
            }
        }
    }

    @Test("under the lock, an unchanged fingerprint leaves the catalog read out; a store changed since the survey is checked and refused")
    func planComparesTheSurveyedFingerprint() throws {
        let model = try Self.model()
        try S.withStore(model, rows: 20) { connection in
            let metadata = try #require(try StoreCatalog.snapshot(store: S.store, on: connection).metadata)
            var migrator = StoreMigrator(connection: connection, model: model, store: S.store)
            migrator.contracts = ContractCatalogs()
            migrator.surveyedCatalog = SurveyedCatalog(versionName: metadata.versionName, modelHash: metadata.modelHash, fingerprint: try fingerprint(on: connection))
            #expect(try migrator.plan().steps.count == 1)
            // No contract was built: the drift check did not run.
            #expect(migrator.contracts.buildCount == 0)

            // Another version name recorded for the same hash: the survey's verdict is not reused.
            var renamed = migrator
            renamed.surveyedCatalog?.versionName = "v0"
            #expect(try renamed.plan().steps.count == 1)
            #expect(migrator.contracts.buildCount == 1)

            try connection.execute("ALTER TABLE \(ident: S.store, "product") DROP COLUMN rating")
            let refused = try #require(#expect(throws: StoreDrifted.self) { try migrator.plan() })
            #expect(refused.description.contains("product.rating"), "\(refused)")
            #expect(try S.version(on: connection) == "v1")
        }
    }
}
