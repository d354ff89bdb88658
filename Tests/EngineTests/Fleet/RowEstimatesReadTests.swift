import Foundation
import PostgresClient
import Testing
import TestSupport
@testable import Engine

/// The row estimates read from the statistics: each table's rows and each entity's share of its
/// table (`_entity`'s most common values), for one store and for several in the same statements,
/// never another store's.
@Suite(integration) struct RowEstimatesReadTests {
    @Test func tablesAndEntitySharesOfTheStoresAskedOnly() throws {
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            for (store, chefs) in [("s_a", 30), ("s_b", 10), ("s_other", 50)] {
                try connection.execute("CREATE SCHEMA \(ident: store)")
                try connection.execute("CREATE TABLE \(ident: store, "person") (_pk bigint PRIMARY KEY, _entity text NOT NULL)")
                try connection.execute("""
                    INSERT INTO \(ident: store, "person") SELECT n, CASE WHEN n <= \(literal: chefs) THEN 'Chef' ELSE 'Person' END FROM generate_series(1, 40) AS n
                    """)
                try connection.execute("ANALYZE \(ident: store, "person")")
            }
            let one = try StoreCatalog.rowEstimates(store: "s_a", on: connection)
            #expect(one.tables == ["person": 40])
            #expect(one.entityShares["person"]?.mapValues { ($0 * 100).rounded() } == ["Chef": 75, "Person": 25], "\(one)")
            let several = try StoreCatalog.rowEstimates(of: ["s_a", "s_b"], on: connection)
            #expect(several.keys.sorted() == ["s_a", "s_b"])
            #expect(several["s_a"] == one)
            #expect(several["s_b"]?.entityShares["person"]?.mapValues { ($0 * 100).rounded() } == ["Chef": 25, "Person": 75], "\(several)")
        }
    }
}
