import Foundation
import Testing
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// The application during a corpus run applied online, for any model: on the tables of the
/// entities the run keeps, it copies a row (an insert with the same values), appends to a text
/// value, or deletes a row, each transaction written to the live store and identically to its
/// twin, which stays at the version the live store's running step starts from: it is migrated
/// offline after each step, the writer paused from the step's switch-over until then (`pause`,
/// `resume`). A write either store refuses (a constraint, a name the store no longer has) rolls
/// back in both (a `TwinWriter` with the `corpus` rules).
enum CorpusWrites {
    /// A table of the first version, with the entities of its rows the run keeps.
    struct Target: Sendable {
        var table: String
        var entities: [String]
    }

    static func writer(url: String, live: String, twin: String, targets: [Target]) -> TwinWriter {
        TwinWriter(url: url, live: live, twin: twin, rules: .corpus) { writer, connection in
            try writeOnce(targets, writer, on: connection)
        }
    }

    /// Column names and types of `schema.table`.
    private static func columns(_ schema: String, _ table: String, on connection: PostgresConnection) throws -> [String: String] {
        let result = try connection.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = \(schema) AND table_name = \(table)")
        return Dictionary(result.rows.compactMap { row in row[0].map { ($0, row[1] ?? "") } }, uniquingKeysWith: { first, _ in first })
    }

    /// One write on one of `targets`, the same in both stores.
    private static func writeOnce(_ targets: [Target], _ writer: TwinWriter, on connection: PostgresConnection) throws {
        let live = writer.live, twin = writer.twin, random = writer.random
        guard !targets.isEmpty else { throw TwinWriter.NothingWritten() }
        let target = targets[random(0...(targets.count - 1))]
        let twinColumns = try columns(twin, target.table, on: connection)
        let liveColumns = try columns(live, target.table, on: connection)
        guard !liveColumns.isEmpty else { throw TwinWriter.NothingWritten() }
        // Keys over the whole table: rows the batches passed and rows they have not reached.
        guard let key = try connection.execute("""
            SELECT _pk FROM \(ident: twin, target.table) WHERE _entity IN (\(literals: target.entities)) ORDER BY random() LIMIT 1
            """).rows.first?.first.flatMap({ $0 }).flatMap({ Int64($0) }) else { throw TwinWriter.NothingWritten() }
        let shared = twinColumns.keys.filter { $0 != "_pk" && liveColumns[$0] != nil }.sorted()
        switch random(0...5) {
        case 0, 1:
            let copied = try connection.execute("""
                INSERT INTO \(ident: live, target.table) (\(idents: shared)) SELECT \(idents: shared) FROM \(ident: live, target.table)
                WHERE _pk = \(key) RETURNING _pk
                """)
            guard let newKey = copied.rows.first?.first.flatMap({ $0 }).flatMap({ Int64($0) }) else { throw TwinWriter.NothingWritten() }
            try connection.execute("""
                INSERT INTO \(ident: twin, target.table) (_pk, \(idents: shared)) OVERRIDING SYSTEM VALUE
                SELECT \(newKey)::bigint, \(idents: shared) FROM \(ident: twin, target.table) WHERE _pk = \(key)
                """)
        case 2, 3, 4:
            let texts = shared.filter { twinColumns[$0] == "text" && liveColumns[$0] == "text" && !$0.hasPrefix("_") }
            guard !texts.isEmpty else { throw TwinWriter.NothingWritten() }
            let column = texts[random(0...(texts.count - 1))]
            for store in [live, twin] {
                try connection.execute("UPDATE \(ident: store, target.table) SET \(ident: column) = \(ident: column) || '+' WHERE _pk = \(key)")
            }
        default:
            for store in [live, twin] {
                try connection.execute("DELETE FROM \(ident: store, target.table) WHERE _pk = \(key)")
            }
        }
    }
}
