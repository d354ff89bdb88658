import ObjectModel
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// What the online writer tests start from, in a fresh database: the store at its first
/// version with 300 sample rows per entity, and a shadow copy of it (another schema, the same
/// rows under the same keys). A writer writes both alike; the shadow, migrated offline at the
/// end, gives what the live store must hold.
enum ShadowedStore {
    static func with(_ model: VersionedModel, store: String, shadow: String, _ body: (PostgresConnection, _ url: String) throws -> Void) throws {
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try SampleDataTests.createAndFill(model, version: "v1", store: store, rows: 300, on: connection)
            _ = try StoreMigrator(connection: connection, model: model, store: shadow, targetVersion: "v1").apply()
            try connection.transaction {
                try connection.execute("SET LOCAL session_replication_role = replica")
                for table in try connection.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = \(store) ORDER BY 1").rows.compactMap({ $0[0] }) {
                    try connection.execute("INSERT INTO \(ident: shadow, table) OVERRIDING SYSTEM VALUE SELECT * FROM \(ident: store, table)")
                }
            }
            try body(connection, url)
        }
    }
}

extension TwinWriter {
    /// The store and its shadow copy (`ShadowedStore`), and a writer (not started) writing both
    /// with the `guarded` rules: its writes are the first version's, and stop at the switch-over.
    static func withShadowedStore(
        _ model: VersionedModel, store: String, shadow: String, write: @escaping Write,
        _ body: (PostgresConnection, TwinWriter, _ url: String) throws -> Void
    ) throws {
        try ShadowedStore.with(model, store: store, shadow: shadow) { connection, url in
            try body(connection, TwinWriter(url: url, live: store, twin: shadow, rules: .guarded, write: write), url)
        }
    }
}
