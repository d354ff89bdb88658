import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// The columns subscribers added first, taken back when the run stops before the publisher's
/// step committed (it failed, or a later subscriber could not add its columns): the publisher
/// never sends them, and the subscriber's store, at its old version, would otherwise hold
/// columns its version does not have (drift).
struct AddedColumnsUndo {
    /// Per subscriber, the columns this run added (`ReplicatedBackfill.addColumns`).
    var added: [(subscriber: ReplicatedApply.Subscriber, columns: [AddedColumn], version: String?)] = []

    /// Drops each column again, on each subscriber in one transaction under the policy's
    /// bounded lock timeout, when its table is locked and it still is this run's: the store
    /// at the version it was planned at, the column there, no row holding anything but what it
    /// was added with. Returns what was done, in words, for the error; never throws (the run
    /// already failed: a column that cannot be dropped is kept, and said so).
    func undo(store: String, policy: ExecutionPolicy) -> String {
        var said: [String] = []
        for (subscriber, columns, version) in added where !columns.isEmpty {
            let names = columns.map { "\(store).\($0.table).\($0.column)" }.joined(separator: ", ")
            do {
                let kept = try policy.transaction(on: subscriber.migrator.connection) {
                    try drop(columns, store: store, version: version, on: subscriber.migrator.connection)
                }
                if kept.isEmpty {
                    said.append("subscriber \(subscriber.name): dropped the step's new columns \(names) again (empty, added by this run)")
                } else {
                    said.append("subscriber \(subscriber.name): kept the step's new columns \(names): \(kept); drop them by hand once the publisher's step is settled")
                }
            } catch {
                said.append("subscriber \(subscriber.name): could not drop the step's new columns \(names) again (\(error)); the next apply --subscriber keeps them, or drop them by hand")
            }
        }
        return said.joined(separator: "; ")
    }

    /// Why the columns were kept, or "" when all were dropped. Either all or none: the
    /// store's step adds them together.
    private func drop(_ columns: [AddedColumn], store: String, version: String?, on connection: PostgresConnection) throws -> String {
        for table in Set(columns.map(\.table)).sorted() {
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
        for column in columns {
            _ = try connection.execute(column.drop.sql)
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
