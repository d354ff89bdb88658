import Foundation
import Testing
import ObjectModel
import PostgresClient
import TestSupport
@testable import Engine

/// Issue 24: `apply --online` rebuilds the table an entity's rows move out of beside itself;
/// the new table takes the old one's place in a `FOR TABLE` publication (with its row filter)
/// and its `REPLICA IDENTITY` in the switch-over's transaction (refused as a dependent object
/// before).
/// Proves Planning/Changes: DeleteRows (with Online/OnlineShadowTable.swift).
@Suite(integration) struct OnlineRebuildPublicationTests {
    typealias S = MigratedStore

    @Test func aRebuiltTableStaysPublishedWithItsReplicaIdentity() throws {
        let model = try HierarchyMigrationTests.dogLeavesAnimals()
        try S.withStore(model) { connection in
            try connection.execute("CREATE PUBLICATION animals FOR TABLE shop.animal WHERE (_pk > 0)")
            try connection.execute("ALTER TABLE shop.animal REPLICA IDENTITY FULL")
            let before = try connection.execute("SELECT 'shop.animal'::regclass::oid::text AS oid").value(0, "oid")
            let plan = try StoreMigrator(connection: connection, model: model, store: S.store).plan()
            #expect(plan.replication.publications == [.init(name: "animals", form: .tableList, tables: ["animal"])])

            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(batchSize: 7, online: true))
            #expect(try S.version(on: connection) == "v2")
            let after = try connection.execute("""
                SELECT c.oid::text AS oid, c.relreplident::text AS identity,
                       (SELECT string_agg(schemaname || '.' || tablename || ' ' || coalesce(rowfilter, ''), ',') FROM pg_publication_tables WHERE pubname = 'animals') AS published
                FROM pg_class c WHERE c.oid = 'shop.animal'::regclass
                """)
            #expect(after.value(0, "oid") != before, "the table was not rebuilt: the test proves nothing")
            #expect(after.value(0, "identity") == "f")
            #expect(after.value(0, "published") == "shop.animal (_pk > 0)")
        }
    }
}
