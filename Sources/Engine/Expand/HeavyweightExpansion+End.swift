import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// `complete` of a heavyweight expansion: the `apply --expand` run waiting before its switch-over
/// is given the proceed and switches over (`HeavyweightExpansion.complete`, in the swap's
/// transaction); nothing is left to run here.
extension ExpansionCompletion {
    /// The longest `complete` waits for the run to switch over once it gave the proceed (the
    /// run looks each second; the switch-over is the last round and the swap, under the
    /// write guard).
    static let switchOverWaitSeconds: Double = 600

    /// 1. Sessions using the new version's views: refused, naming them, unless `force`;
    /// 2. the proceed (`orchestrator control proceed`) for the step the run holds back;
    /// 3. wait, at most `switchOverWaitSeconds`, for the expansion's row to go. A run no longer
    ///    there (the store's lock free) cannot switch over: `NoRunToSwitchOver`, the proceed
    ///    kept for the next `apply --expand`, which continues the step and switches over.
    func completeHeavyweight(_ expansion: ExpansionRecord, force: Bool, started: Date) throws -> CompletionReport {
        let sessions = try Self.sessions(using: expansion.viewsSchema, on: connection)
        if !sessions.isEmpty {
            guard force else { throw OldVersionInUse(store: store, viewsSchema: expansion.viewsSchema, sessions: sessions) }
            try Self.end(sessions, on: connection)
        }
        let step = try StoreControls.proceed(store: store, on: connection)
        let lock = StoreLock(store: store, connection: connection)
        while try ExpansionRecord.read(store: store, on: connection) != nil {
            guard try !connection.advisoryLockHolders(key: lock.key).isEmpty else { throw NoRunToSwitchOver(store: store, step: step) }
            guard Date().timeIntervalSince(started) < Self.switchOverWaitSeconds else {
                throw NoRunToSwitchOver(store: store, step: step, waitedSeconds: Self.switchOverWaitSeconds)
            }
            Thread.sleep(forTimeInterval: StoreLock.pollInterval)
        }
        return CompletionReport(
            store: store, oldVersion: expansion.oldVersion, newVersion: expansion.newVersion, viewsSchema: expansion.viewsSchema,
            statements: ["DROP SCHEMA IF EXISTS \(quoteIdentifier(expansion.viewsSchema)) CASCADE"], endedSessions: sessions,
            durationMilliseconds: milliseconds(since: started), switchedOver: true
        )
    }
}

/// `complete` gave the proceed, but no `apply --expand` run switched over: exit 1.
public struct NoRunToSwitchOver: Error, CustomStringConvertible {
    public var store: String
    public var step: String?
    /// Set when a run was there but did not switch over in time.
    public var waitedSeconds: Double?

    public var description: String {
        let what = step.map { "the switch-over of \($0)" } ?? "the switch-over"
        if let waitedSeconds {
            return "store \(store): proceed given, but the apply --expand run did not finish \(what) within \(Int(waitedSeconds)) s; see its output (orchestrator status --store \(store) shows where it is)"
        }
        return "store \(store): proceed given, but no apply --expand run of it is waiting to switch over (it stopped); run apply --expand again with the same model: it continues the step and switches over at once"
    }
}

/// `rollback` of a heavyweight expansion: the store's tables were never changed, so the
/// rollback drops what the step built beside them: the new version's views, the staging
/// schema (with the functions of the change triggers on the store's tables, so the triggers
/// too), the checkpoints and the postponement. Every row stays as the old release wrote it.
extension ExpansionRollback {
    /// 1. A dry run lists the statements, nothing counted (nothing of the store is dropped);
    /// 2. the `apply --expand` run waiting for `complete` holds the store's lock: named and
    ///    refused, unless `force` ends its session (the run stops; its work is dropped here);
    /// 3. the store's lock, then the sessions using the views: refused unless `force`;
    /// 4. one transaction under `lock_timeout`, retried: the drops, the expansion's row, a
    ///    `rollback` row in the history.
    func rollBackHeavyweight(
        _ expansion: ExpansionRecord, dryRun: Bool, force: Bool, options: ApplyOptions, started: Date, onLockWait: ([AdvisoryLockHolder]) -> Void
    ) throws -> RollbackReport {
        let staging = HeavyweightMigration.stagingSchema(for: store)
        let statements: [SQL] = ["DROP SCHEMA IF EXISTS \(ident: expansion.viewsSchema) CASCADE", "DROP SCHEMA IF EXISTS \(ident: staging) CASCADE"]
        func report(_ sessions: [OldVersionSession], dryRun: Bool) -> RollbackReport {
            RollbackReport(
                store: store, fromVersion: expansion.newVersion, version: expansion.oldVersion, viewsSchema: expansion.viewsSchema, isDryRun: dryRun,
                statements: statements.map(\.text), losses: [], endedSessions: sessions, durationMilliseconds: milliseconds(since: started)
            )
        }
        if dryRun { return report([], dryRun: true) }
        let lock = StoreLock(store: store, connection: connection)
        let runs = try connection.advisoryLockHolders(key: lock.key).map {
            OldVersionSession(pid: $0.pid, applicationName: $0.applicationName, user: $0.user ?? "", state: $0.state ?? "")
        }
        if !runs.isEmpty {
            guard force else { throw ExpandedRunWaiting(store: store, sessions: runs) }
            try ExpansionCompletion.end(runs, on: connection)
        }
        try lock.acquire(waitingAtMost: options.lockWaitSeconds, onWait: onLockWait)
        defer { lock.release() }
        guard try ExpansionRecord.read(store: store, on: connection) != nil else { throw NothingToRollBack(store: store) }
        let readers = try ExpansionCompletion.sessions(using: expansion.viewsSchema, on: connection)
        if !readers.isEmpty {
            guard force else { throw StoreInUseForRollback(store: store, sessions: readers) }
            try ExpansionCompletion.end(readers, on: connection)
        }
        let meta = MetadataSchema.schema
        try options.executionPolicy.transaction(on: connection) {
            for statement in statements { try connection.execute(statement) }
            try StoreSchemas.unregister(staging, on: connection)
            try connection.execute("DELETE FROM \(ident: meta, CheckpointTable.table) WHERE store = \(store) AND kind = 'heavyweight'")
            try PostponedSwitchOver.clear(store: store, on: connection)
            try ExpansionRecord.delete(store: store, on: connection)
            let hashes = try connection.execute("""
                SELECT (SELECT model_hash FROM \(ident: meta, "stores") WHERE store = \(store)) AS old_hash,
                       (SELECT to_hash FROM \(ident: meta, "migrations") WHERE store = \(store) AND kind = 'expand' AND outcome = 'succeeded'
                        ORDER BY id DESC LIMIT 1) AS new_hash
                """)
            try StoreMetadataWriter.recordEvent(
                store: store, kind: "rollback", from: (expansion.newVersion, hashes.value(0, "new_hash") ?? ""),
                to: (expansion.oldVersion, hashes.value(0, "old_hash") ?? ""), statements: statements, started: started, on: connection
            )
        }
        return report(runs + readers, dryRun: false)
    }
}

/// `rollback` refused: the `apply --expand` run of a heavyweight step still waits for
/// `complete`, holding the store's lock; nothing was changed.
public struct ExpandedRunWaiting: Error, CustomStringConvertible {
    public var store: String
    public var sessions: [OldVersionSession]

    public var description: String {
        "store \(store): the apply --expand run still waits for complete (its session: "
            + sessions.map(\.description).joined(separator: "; ")
            + "); nothing was changed (stop it first, or run rollback --force to end its session)"
    }
}
