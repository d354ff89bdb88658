import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// `apply --online --postpone-switch-over` (docs/replication.md, "Steering a running
/// migration"): the step does all its work, then waits before its switch-over, the
/// application's writes going on, until `orchestrator control proceed` or
/// `--postpone-timeout` (it then stops, resumably).
///
/// The store's `controls` row names the step held back (`postponed`): a proceed counts for that
/// step only. A run names its step when it starts, which drops a proceed given for another
/// step or for none (left over from an earlier run), and keeps one given for this very step
/// (a run of it that waited and stopped: apply again then switches over). The switch-over
/// clears both, in its transaction.
struct PostponedSwitchOver {
    var store: String
    /// `'v1' -> 'v2' (plan 1a2b3c4d5e6f)`: the step and its plan's digest.
    var step: String
    var timeoutSeconds: Double
    var pollSeconds: Double = 1
    /// `apply --expand` of a heavyweight step: the new version's views, which `complete` ends.
    var views: NewVersionViews?

    init(store: String, from: String?, to: String, digest: String, timeoutSeconds: Double) {
        self.store = store
        step = "\(from.map { "'\($0)' -> " } ?? "")'\(to)' (plan \(digest.prefix(12)))"
        self.timeoutSeconds = timeoutSeconds
    }

    /// The postponement of `step`'s switch-over (plan `digest`) when `options` ask for it, or
    /// when the step is a heavyweight one expanded (`apply --expand`: `complete` gives the
    /// proceed), outside a rehearsal (whose one transaction must not wait).
    static func of(_ step: PlannedStep, digest: String, store: String, options: ApplyOptions, on connection: PostgresConnection) -> PostponedSwitchOver? {
        guard options.postponeSwitchOver || step.staged?.newVersionViews != nil, !connection.isRehearsing else { return nil }
        var postponed = PostponedSwitchOver(store: store, from: step.from, to: step.to, digest: digest, timeoutSeconds: options.postponeTimeoutSeconds)
        postponed.views = step.staged?.newVersionViews
        return postponed
    }

    var reason: String {
        guard let views else { return "switch-over postponed (--postpone-switch-over): waiting for orchestrator control proceed --store \(store)" }
        return "switch-over postponed (apply --expand): '\(views.oldVersion)' writes \(store), '\(views.version)' is served \(views.isReadOnly ? "read-only" : "written through \(views.writes?.file ?? "")") in \"\(views.schema)\"; waiting for orchestrator complete --store \(store) (or rollback)"
    }

    /// When the step starts: the store's row names it (see above).
    func hold(on connection: PostgresConnection) throws {
        _ = try connection.execute("""
            INSERT INTO \(ident: MetadataSchema.schema, StoreControls.table) AS c (store, paused, postponed) VALUES (\(store), false, \(step))
            ON CONFLICT (store) DO UPDATE SET postponed = EXCLUDED.postponed,
                proceed = c.proceed AND c.postponed IS NOT DISTINCT FROM EXCLUDED.postponed
            """)
    }

    /// Whether `orchestrator control proceed` was given for this step.
    func isProceeding(on connection: PostgresConnection) throws -> Bool {
        let row = try connection.execute("""
            SELECT proceed FROM \(ident: MetadataSchema.schema, StoreControls.table) WHERE store = \(store) AND postponed = \(step)
            """)
        return !row.isEmpty && row.bool(0, "proceed") == true
    }

    /// Before the switch-over, outside any transaction: returns once a proceed was given for
    /// the step. Meanwhile, each `pollSeconds`: the gate's hooks (a pause holds the wait, and
    /// a proceed counts only once it is resumed), then `meanwhile` (heavyweight: catch-up
    /// rounds, so that the switch-over stays short). `onWaiting` is told when the wait starts,
    /// and again after each pause. Past `timeoutSeconds`: `RunStopped`, the work checkpointed.
    func wait(gate: BatchGate, position: BatchPosition, onWaiting: (String) -> Void, meanwhile: () throws -> Void = {}) throws {
        let connection = gate.connection
        if try isProceeding(on: connection) { return }
        let pauses = PauseCount()
        var gate = gate
        let reportPause = gate.onPause
        gate.onPause = { reason in
            pauses.count += 1
            reportPause(reason)
        }
        let record = gate.record
        defer { record?.postponing(nil) }
        let started = Date()
        var told = -1
        while true {
            if told != pauses.count {
                told = pauses.count
                record?.postponing(reason)
                onWaiting(reason)
            }
            try gate.pass(position)
            if try isProceeding(on: connection) { return }
            let left = timeoutSeconds - Date().timeIntervalSince(started)
            guard left > 0 else {
                throw RunStopped(
                    store: store,
                    reason: "the switch-over of \(step) waited for orchestrator control proceed --store \(store) for longer than --postpone-timeout (\(DurationText.text(seconds: timeoutSeconds)))"
                )
            }
            try meanwhile()
            Thread.sleep(forTimeInterval: min(pollSeconds, left))
        }
    }

    /// In the switch-over's transaction: the store's row names no step held back any more.
    static func clear(store: String, on connection: PostgresConnection) throws {
        _ = try connection.execute("""
            UPDATE \(ident: MetadataSchema.schema, StoreControls.table) SET postponed = NULL, proceed = false
            WHERE store = \(store) AND (postponed IS NOT NULL OR proceed)
            """)
    }
}

/// Pauses seen during a wait (the gate tells them from its own closure).
private final class PauseCount: @unchecked Sendable {
    var count = 0
}
