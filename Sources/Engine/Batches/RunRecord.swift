import Foundation
import PostgresClient
import SQLBuilding

/// Writes the store's row of `orchestrator.runs` (`RunningMigration`) for one `apply`, on the
/// run's own connection where it is outside any transaction (a step or phase starting, between
/// two batches, a wait), so that `status` sees it at once; inside one (between the fetches of a
/// streaming pass, `isInsideTransaction`), on a second session, under the run's session's pid. A change of step,
/// phase or state is written at once; rows done at most once a second. A write that fails
/// never fails the run: the row is what `status` shows, not part of the migration.
final class RunRecord: @unchecked Sendable {
    let store: String
    let connection: PostgresConnection
    private var step = ""
    private var phase: String?
    private var rows = 0
    /// Why the run waits between batches (a pause, a throttle), while it does.
    private var waiting: String?
    /// Why the run waits before its switch-over, while it does.
    private var postponed: String?
    private var lastWrite = Date.distantPast
    /// The run's session's pid, as its first write returned it.
    private var pid: Int64?
    /// The second session, opened at the first write made inside a transaction.
    private var beside: PostgresConnection?
    /// Set while the run's session is inside a transaction: writes then go through `beside`.
    var isInsideTransaction = false

    static let rowsInterval = 1.0

    init(store: String, connection: PostgresConnection) {
        self.store = store
        self.connection = connection
    }

    /// Step `number` of `count` starts.
    func step(_ number: Int, of count: Int, kind: String, from: String?, to: String) {
        step = "step \(number) of \(count): \(kind) \(from.map { "'\($0)' -> " } ?? "")'\(to)'"
        phase = nil
        rows = 0
        postponed = nil
        write()
    }

    /// A phase, a pass or a stage of the current step starts (its `passStarted` event): a
    /// lightweight online phase by its summary, any other by its stage (and entity mapping).
    func phase(of event: ProgressEvent) {
        phase = event.phase ?? "pass \(event.pass) of \(event.passCount): \(event.stage.name)\(event.entityMapping.map { " " + $0 } ?? "")"
        rows = 0
        write()
    }

    /// Between two batches: rows done in the phase so far.
    func rows(_ done: Int) {
        rows = done
        if Date().timeIntervalSince(lastWrite) >= Self.rowsInterval { write() }
    }

    /// The run waits between batches (`reason`), or goes on (nil).
    func waiting(_ reason: String?) {
        guard reason != waiting else { return }
        waiting = reason
        write()
    }

    /// The run waits before its switch-over (`reason`), or no longer does (nil).
    func postponing(_ reason: String?) {
        guard reason != postponed else { return }
        postponed = reason
        write()
    }

    var state: RunningMigration.State {
        if let waiting { return waiting.hasPrefix(ReplicationThrottle.reasonPrefix) ? .throttled : .paused }
        return postponed == nil ? .running : .waitingToSwitchOver
    }

    /// The run ended (finished, failed or stopped): its row goes.
    func end() {
        beside?.close()
        beside = nil
        _ = try? connection.execute("DELETE FROM \(ident: MetadataSchema.schema, StoreRuns.table) WHERE store = \(store) AND pid = pg_backend_pid()")
    }

    private func write() {
        lastWrite = Date()
        let reason = waiting ?? postponed
        let session: PostgresConnection
        let runPid: SQL
        if isInsideTransaction {
            guard let pid, let opened = beside ?? (try? connection.reconnect()) else { return }
            beside = opened
            session = opened
            runPid = "\(literal: pid)"
        } else {
            session = connection
            runPid = "pg_backend_pid()"
        }
        let written = try? session.execute("""
            INSERT INTO \(ident: MetadataSchema.schema, StoreRuns.table) AS r (store, pid, step, phase, rows_done, state, reason)
            VALUES (\(store), \(runPid), \(step), \(phase.map(SQLValue.text) ?? .null), \(rows), \(state.rawValue), \(reason.map(SQLValue.text) ?? .null))
            ON CONFLICT (store) DO UPDATE SET pid = EXCLUDED.pid, step = EXCLUDED.step, phase = EXCLUDED.phase,
                rows_done = EXCLUDED.rows_done, state = EXCLUDED.state, reason = EXCLUDED.reason, updated_at = now(),
                started_at = CASE WHEN r.pid = EXCLUDED.pid THEN r.started_at ELSE now() END
            RETURNING r.pid
            """)
        if !isInsideTransaction, let returned = written?.int(0, "pid") { pid = returned }
    }
}
