import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// The columns and tables subscribers (and, for tables it publishes, the publisher) added
/// first, taken back when the run stops before the publisher's step committed (it failed, or a
/// later side could not add its part): the publisher never sends them, and each store, at its
/// old version, would otherwise hold columns and tables its version does not have (drift).
struct AddedColumnsUndo {
    /// Per side, the columns and tables this run added (`ReplicatedBackfill.addFirst`).
    /// `side` names it in the error: "subscriber <url>", or "the publisher".
    var added: [(side: String, migrator: StoreMigrator, columns: [AddedColumn], tables: [String], version: String?)] = []

    /// Drops each column and table again, on each side in one transaction under the policy's
    /// bounded lock timeout, when its table is locked and it still is this run's: the store
    /// at the version it was planned at, the column or table there, no row holding anything but
    /// what it was added with (a table: no row). Returns what was done, in words, for the
    /// error; never throws (the run already failed: what cannot be dropped is kept, and said so).
    func undo(store: String, policy: ExecutionPolicy) -> String {
        var said: [String] = []
        for (side, migrator, columns, tables, version) in added where !columns.isEmpty || !tables.isEmpty {
            let names = [
                columns.isEmpty ? nil : "columns " + columns.map { "\(store).\($0.table).\($0.column)" }.joined(separator: ", "),
                tables.isEmpty ? nil : "tables " + tables.map { "\(store).\($0)" }.joined(separator: ", "),
            ].compactMap { $0 }.joined(separator: " and ")
            do {
                let kept = try policy.transaction(on: migrator.connection) {
                    try drop(columns, tables: tables, store: store, version: version, on: migrator.connection)
                }
                if kept.isEmpty {
                    said.append("\(side): dropped the step's new \(names) again (empty, added by this run)")
                } else {
                    said.append("\(side): kept the step's new \(names): \(kept); drop them by hand once the publisher's step is settled")
                }
            } catch {
                said.append("\(side): could not drop the step's new \(names) again (\(error)); the next apply --subscriber keeps them, or drop them by hand")
            }
        }
        return said.joined(separator: "; ")
    }

    /// Why the columns and tables were kept, or "" when all were dropped. Either all or none:
    /// the store's step adds them together.
    private func drop(_ columns: [AddedColumn], tables: [String], store: String, version: String?, on connection: PostgresConnection) throws -> String {
        for table in Set(columns.map(\.table) + tables).sorted() {
            _ = try connection.execute("LOCK TABLE \(ident: store, table) IN ACCESS EXCLUSIVE MODE")
        }
        let now = try connection.execute("SELECT version_name FROM orchestrator.stores WHERE store = \(store)").value(0, "version_name")
        guard now == version else { return "the store is at '\(now ?? "?")' now, not '\(version ?? "?")'" }
        for column in columns {
            let present = try connection.execute("""
                SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(\(quoteIdentifier(store) + "." + quoteIdentifier(column.table)))
                  AND attname = \(column.column) AND NOT attisdropped) AS yes
                """).bool(0, "yes") == true
            guard present else { return "\(column.table).\(column.column) is no longer there" }
            if try connection.execute(column.isWritten).bool(0, "written") == true {
                return "\(column.table).\(column.column) holds values written since"
            }
        }
        for table in tables where try connection.execute("SELECT EXISTS (SELECT 1 FROM \(ident: store, table)) AS yes").bool(0, "yes") == true {
            return "\(table) holds rows written since"
        }
        for column in columns {
            _ = try connection.execute(column.drop.sql)
        }
        for table in tables {
            _ = try connection.execute("DROP TABLE \(ident: store, table)")
        }
        return ""
    }
}

/// The publisher's step failed after subscribers added its new columns first; `undone` says
/// what became of those columns on each subscriber.
public struct PublisherStepFailed: Error, CustomStringConvertible {
    public var underlying: Error
    public var undone: String

    public var description: String {
        "\(underlying). The publisher's store stays at its version; \(undone)"
    }
}
