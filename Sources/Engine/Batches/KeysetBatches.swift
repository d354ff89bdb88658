import Foundation
import PostgresClient
import SQLBuilding

/// The one batch loop of every run (docs/online-migrations.md, "Batches"): keyset batches
/// (`_pk > last ORDER BY _pk LIMIT n`), so sparse keys cost no empty transaction; each batch
/// in its own transaction under the execution policy; its size adapted to `--batch-time`
/// (`BatchSizing`); the hooks asked after each commit (`BatchGate`).
struct KeysetBatches {
    var connection: PostgresConnection
    var policy: ExecutionPolicy
    var sizing: BatchSizing
    var gate: BatchGate
    var store: String

    /// 1. `batch(after, limit)` runs in a transaction: the keys after `after` (from the first
    ///    when nil), at most `limit` of them; it returns the rows it touched and the last key
    ///    it covered, or nil when no key was left (that transaction commits too);
    /// 2. the batch's time adapts the next one's size;
    /// 3. `onBatch` gets the rows so far, then the gate decides whether to go on.
    /// Returns the rows of every batch.
    mutating func run(after start: Int64?, _ batch: (_ after: Int64?, _ limit: Int) throws -> (rows: Int, last: Int64)?, onBatch: (Int) -> Void) throws -> Int {
        var after = start, rows = 0
        while true {
            let limit = sizing.size
            let started = Date()
            guard let done = try policy.transaction(on: connection, { try batch(after, limit) }) else { return rows }
            sizing.adapt(rows: done.rows, seconds: Date().timeIntervalSince(started))
            rows += done.rows
            after = done.last
            onBatch(rows)
            try gate.pass(BatchPosition(store: store, rowsDone: rows, holdsWrites: false))
        }
    }

    /// The first and the last of the next `limit` keys of `table` after `after` and up to
    /// `high`; nil when none is left.
    static func keys(
        of schema: String, _ table: String, after: Int64?, through high: Int64, limit: Int, on connection: PostgresConnection
    ) throws -> ClosedRange<Int64>? {
        let lower: SQL = after.map { " AND \(ident: "_pk") > \(literal: $0)" } ?? ""
        let result = try connection.execute("""
            SELECT min(\(ident: "_pk")) AS first, max(\(ident: "_pk")) AS last FROM (SELECT \(ident: "_pk") FROM \(ident: schema, table)
            WHERE \(ident: "_pk") <= \(literal: high)\(lower) ORDER BY \(ident: "_pk") LIMIT \(literal: limit)) AS batch
            """)
        guard let first = result.int(0, "first"), let last = result.int(0, "last") else { return nil }
        return first...last
    }
}
