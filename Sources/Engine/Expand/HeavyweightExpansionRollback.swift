import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// What a heavyweight step built beside the store, for `rollback` to drop: an expansion waiting
/// for `complete` (the new version's views, recorded in `orchestrator.expansions`), or a run
/// stopped before that wait (killed, `--pause-timeout`, a failure), which has no views and no
/// expansion yet: its checkpoints name it. Either way the store's tables were never changed.
struct StagedStep: Sendable, Hashable {
    var oldVersion: String
    var newVersion: String
    /// The new version's views (`<store>@<new>`); nil for a run stopped before its wait.
    var viewsSchema: String?

    init(_ expansion: ExpansionRecord) {
        oldVersion = expansion.oldVersion
        newVersion = expansion.newVersion
        viewsSchema = expansion.viewsSchema
    }

    init(oldVersion: String, newVersion: String) {
        self.oldVersion = oldVersion
        self.newVersion = newVersion
    }

    /// The heavyweight step a stopped run of `store` left: its row 0 in `orchestrator.checkpoints`
    /// (written with the staging schema and its change triggers, deleted by the swap), from
    /// the version the store's metadata is at. Nil when there is none, or the store is at
    /// another version (the checkpoints are not of a step from it).
    static func stopped(store: String, on connection: PostgresConnection) throws -> StagedStep? {
        guard try CheckpointTable.exists(on: connection) else { return nil }
        let meta = MetadataSchema.schema
        let row = try connection.execute("""
            SELECT c.from_version, c.to_version FROM \(ident: meta, CheckpointTable.table) c
            JOIN \(ident: meta, "stores") s ON s.store = c.store AND s.version_name = c.from_version
            WHERE c.store = \(store) AND c.kind = 'heavyweight' AND c.pass = 0
            """)
        guard let values = row.rows.first, let from = values[0], let to = values[1] else { return nil }
        return StagedStep(oldVersion: from, newVersion: to)
    }
}

/// `rollback` of a heavyweight step: the store's tables were never changed, so the rollback
/// drops what the step built beside them: the new version's views (when its run reached the
/// wait for `complete`), the staging schema (with the functions of the change triggers on the
/// store's tables, so the triggers too), the checkpoints and the postponement. Every row stays
/// as the old release wrote it.
extension ExpansionRollback {
    /// The `application_name` of a rollback that ends a run of the store (`force`), while it
    /// rolls back, as SQL: the run, failing, then does not offer to continue from the staging
    /// work. ASCII whatever the store's name (PostgreSQL rewrites other characters in it).
    static func applicationName(store: String) -> SQL {
        "'orchestrator rollback ' || left(md5(\(literal: store)), 16)"
    }

    /// 1. A dry run lists the statements, nothing counted (nothing of the store is dropped);
    /// 2. the `apply` run of the step, waiting for `complete` or still before it, holds the
    ///    store's lock: named and refused, unless `force` ends its session (the run stops; its
    ///    work is dropped here);
    /// 3. the store's lock; the step read again under it; the sessions using the views:
    ///    refused unless `force`;
    /// 4. one transaction under `lock_timeout`, retried: the drops, the checkpoints, the
    ///    postponement, the expansion's row, a `rollback` row in the history.
    func rollBackHeavyweight(
        _ step: StagedStep, dryRun: Bool, force: Bool, options: ApplyOptions, started: Date, onLockWait: ([AdvisoryLockHolder]) -> Void
    ) throws -> RollbackReport {
        let staging = HeavyweightMigration.stagingSchema(for: store)
        let statements: [SQL] = (step.viewsSchema.map { ["DROP SCHEMA IF EXISTS \(ident: $0) CASCADE"] } ?? []) + ["DROP SCHEMA IF EXISTS \(ident: staging) CASCADE"]
        func report(_ sessions: [OldVersionSession], dryRun: Bool) -> RollbackReport {
            RollbackReport(
                store: store, fromVersion: step.newVersion, version: step.oldVersion, viewsSchema: step.viewsSchema ?? staging, isDryRun: dryRun,
                statements: statements.map(\.text), losses: [], endedSessions: sessions, durationMilliseconds: milliseconds(since: started)
            )
        }
        if dryRun { return report([], dryRun: true) }
        var previousName: String?
        defer { if let previousName { _ = try? connection.execute("SELECT set_config('application_name', \(previousName), false)") } }
        let lock = StoreLock(store: store, connection: connection)
        let runs = try connection.advisoryLockHolders(key: lock.key).map {
            OldVersionSession(pid: $0.pid, applicationName: $0.applicationName, user: $0.user ?? "", state: $0.state ?? "")
        }
        if !runs.isEmpty {
            let stopped = step.viewsSchema == nil ? "an apply run of its heavyweight step '\(step.oldVersion)' -> '\(step.newVersion)'" : nil
            guard force else { throw ExpandedRunWaiting(store: store, sessions: runs, runBeforeSwitchOver: stopped) }
            // Named first, until the rollback is done: the run ended here looks for this
            // session before it offers to continue.
            previousName = try connection.execute("SELECT current_setting('application_name') AS name").value(0, "name")
            try connection.execute("SELECT set_config('application_name', \(Self.applicationName(store: store)), false)")
            try ExpansionCompletion.end(runs, on: connection)
        }
        try lock.acquire(waitingAtMost: options.lockWaitSeconds, onWait: onLockWait)
        defer { lock.release() }
        // Read again under the lock: the run may have reached its wait, or switched over.
        let recorded = try ExpansionRecord.read(store: store, on: connection).map(StagedStep.init)
        let current = try recorded ?? StagedStep.stopped(store: store, on: connection)
        guard current == step else { throw NothingToRollBack(store: store) }
        let readers = try step.viewsSchema.map { try ExpansionCompletion.sessions(using: $0, on: connection) } ?? []
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
            // The new version's hash: its `expand` row's, or, stopped before it, the record of versions' (when it knows it).
            let newHash: SQL = step.viewsSchema != nil
                ? "SELECT to_hash FROM \(ident: meta, "migrations") WHERE store = \(store) AND kind = 'expand' AND outcome = 'succeeded' ORDER BY id DESC LIMIT 1"
                : """
                  SELECT v.model_hash FROM \(ident: meta, "model_versions") v JOIN \(ident: meta, "stores") s ON s.model_name = v.model_name
                  WHERE s.store = \(store) AND v.version_name = \(step.newVersion) ORDER BY v.recorded_at DESC LIMIT 1
                  """
            let hashes = try connection.execute("""
                SELECT (SELECT model_hash FROM \(ident: meta, "stores") WHERE store = \(store)) AS old_hash, (\(newHash)) AS new_hash
                """)
            try StoreMetadataWriter.recordEvent(
                store: store, kind: "rollback", from: (step.newVersion, hashes.value(0, "new_hash") ?? ""),
                to: (step.oldVersion, hashes.value(0, "old_hash") ?? ""), statements: statements, started: started, on: connection
            )
        }
        return report(runs + readers, dryRun: false)
    }
}

/// `rollback` refused: the `apply --expand` run of a heavyweight step still waits for
/// `complete`, or (`runBeforeSwitchOver`) a run of the step is still under way before its
/// switch-over, holding the store's lock; nothing was changed.
public struct ExpandedRunWaiting: Error, CustomStringConvertible {
    public var store: String
    public var sessions: [OldVersionSession]
    /// The run, when it has not reached its switch-over (or its wait for `complete`).
    var runBeforeSwitchOver: String?

    public var description: String {
        let what = runBeforeSwitchOver.map { "\($0) is still under way, before its switch-over" } ?? "the apply --expand run still waits for complete"
        return "store \(store): \(what) (its session: " + sessions.map(\.description).joined(separator: "; ")
            + "); nothing was changed (stop it first, or run rollback --force to end its session)"
    }
}
