import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// `orchestrator rollback --store S` (docs/rolling-deploys.md): before `complete`, the store
/// goes back to the version `apply --expand` left, keeping every row and value that version
/// can hold.
/// 1. Read the store's expansion; none: a heavyweight step stopped before its wait for
///    `complete` (`StagedStep.stopped`) is rolled back as a waiting one is, a lightweight one
///    stopped before its switch-over as `rollBackUnfinished` says, else nothing to roll back.
/// 2. Both versions from the database's own record (`orchestrator.model_versions`): the
///    store's, and the one the `expand` row started from. The step back from them
///    (`ExpansionRollbackPlan`), or why there is none.
/// 3. A dry run counts what would be lost and stops there.
/// 4. Take the store's advisory lock, as `apply` does. Sessions holding a lock on the store's
///    tables or the views are named and refused, unless `force` ends them.
/// 5. One transaction under `lock_timeout`, retried: count the losses (any without consent, or
///    a value that does not fit: refused, nothing changed), drop the views, run the step back,
///    write the old version's metadata, delete the expansion, add a `rollback` history row.
public struct ExpansionRollback {
    public var connection: PostgresConnection
    public var store: String
    /// The model an `apply --expand` stopped before its switch-over ran with: the new
    /// version is recorded in the database only at the switch-over (`rollBackUnfinished`).
    public var model: VersionedModel?

    public init(connection: PostgresConnection, store: String, model: VersionedModel? = nil) {
        self.connection = connection
        self.store = store
        self.model = model
    }

    public func rollBack(
        dryRun: Bool = false, allowDataLoss: Bool = false, force: Bool = false, options: ApplyOptions = ApplyOptions(),
        onLockWait: ([AdvisoryLockHolder]) -> Void = { _ in }
    ) throws -> RollbackReport {
        let started = Date()
        guard let recorded = try ExpansionRecord.read(store: store, on: connection) else {
            // A heavyweight step stopped before its wait for `complete`: no expansion yet, its checkpoints name it.
            if let stopped = try StagedStep.stopped(store: store, on: connection) {
                return try rollBackHeavyweight(stopped, dryRun: dryRun, force: force, options: options, started: started, onLockWait: onLockWait)
            }
            // A lightweight one: its online checkpoint names it.
            guard let run = try OnlineCheckpoint.unfinished(store: store, on: connection) else { throw NothingToRollBack(store: store) }
            return try rollBackUnfinished(
                run, dryRun: dryRun, allowDataLoss: allowDataLoss, force: force, options: options, started: started, onLockWait: onLockWait
            )
        }
        if recorded.inFlight.servesNewVersion(of: store) {
            return try rollBackHeavyweight(StagedStep(recorded), dryRun: dryRun, force: force, options: options, started: started, onLockWait: onLockWait)
        }
        if dryRun {
            let (_, plan, _) = try planned()
            return report(plan, losses: try counted(plan.losses), sessions: [], dryRun: true, started: started)
        }
        let lock = StoreLock(store: store, connection: connection)
        try lock.acquire(waitingAtMost: options.lockWaitSeconds, onWait: onLockWait)
        defer { lock.release() }
        // Read again under the lock: a `complete` or another `rollback` may have run meanwhile.
        let (expansion, plan, versions) = try planned()
        let sessions = try ExpansionCompletion.sessions(using: store, on: connection)
            + ExpansionCompletion.sessions(using: expansion.viewsSchema, on: connection)
        let distinct = sessions.reduce(into: [OldVersionSession]()) { if !$0.contains($1) { $0.append($1) } }
        if !distinct.isEmpty {
            guard force else { throw StoreInUseForRollback(store: store, sessions: distinct) }
            try ExpansionCompletion.end(distinct, on: connection)
        }
        let losses = try options.executionPolicy.transaction(on: connection) {
            let losses = try counted(plan.losses)
            try Self.refuse(losses, allowDataLoss: allowDataLoss)
            for statement in plan.statements { try connection.execute(statement.sql) }
            try StoreMetadataWriter.setVersion(store: store, modelName: versions.model, version: versions.old, on: connection)
            try ExpansionRecord.delete(store: store, on: connection)
            try StoreMetadataWriter.recordEvent(
                store: store, kind: "rollback", from: (versions.new.name, VersionHash.hashes(of: versions.new).model),
                to: (versions.old.name, VersionHash.hashes(of: versions.old).model), statements: plan.statements.map(\.sql),
                started: started, on: connection
            )
            return losses
        }
        return report(plan, losses: losses, sessions: distinct, dryRun: false, started: started)
    }

    /// Without consent, rows counted are refused as `apply` refuses a lossy step; a value that
    /// does not fit the old type is refused whatever.
    static func refuse(_ losses: [CountedLoss], allowDataLoss: Bool) throws {
        let misfits = losses.filter { !$0.loss.isAcceptable && $0.rows > 0 }
        if !misfits.isEmpty { throw RollbackRefused(reasons: misfits.map { "[\($0.loss.code.rawValue)] \($0.description)" }) }
        let lost = losses.filter { $0.rows > 0 }
        if !allowDataLoss && !lost.isEmpty { throw DataLossNotAllowed(losses: lost.map { "rollback: [\($0.loss.code.rawValue)] \($0.description)" }) }
    }

    private func planned() throws -> (ExpansionRecord, ExpansionRollbackPlan, RollbackVersions) {
        guard let expansion = try ExpansionRecord.read(store: store, on: connection) else { throw NothingToRollBack(store: store) }
        let versions = try RollbackVersions.read(store: store, expansion: expansion, on: connection)
        let plan = try ExpansionRollbackPlan(from: versions.new, to: versions.old, store: store, viewsSchema: expansion.viewsSchema)
        return (expansion, plan, versions)
    }

    private func counted(_ losses: [RollbackLoss]) throws -> [CountedLoss] {
        try losses.map { CountedLoss(loss: $0, rows: Int(try connection.execute($0.counting).int(0, "rows") ?? 0)) }
    }

    private func report(_ plan: ExpansionRollbackPlan, losses: [CountedLoss], sessions: [OldVersionSession], dryRun: Bool, started: Date) -> RollbackReport {
        RollbackReport(
            store: store, fromVersion: plan.from, version: plan.to, viewsSchema: plan.viewsSchema, isDryRun: dryRun,
            statements: plan.statements.map(\.sql.text), losses: losses, endedSessions: sessions, durationMilliseconds: milliseconds(since: started)
        )
    }
}

/// The two versions of an expansion, from the database's record of versions: the store's
/// (new), and the one its last succeeded `expand` started from (old).
struct RollbackVersions {
    var model: String
    var new: ModelVersion
    var old: ModelVersion

    static func read(store: String, expansion: ExpansionRecord, on connection: PostgresConnection) throws -> RollbackVersions {
        let meta = MetadataSchema.schema
        let result = try connection.execute("""
            SELECT s.model_name, n.definition AS new_definition, o.definition AS old_definition
            FROM \(ident: meta, "stores") s
            LEFT JOIN \(ident: meta, "model_versions") n ON n.model_name = s.model_name AND n.model_hash = s.model_hash
            LEFT JOIN \(ident: meta, "model_versions") o ON o.model_name = s.model_name AND o.model_hash = (
                SELECT from_hash FROM \(ident: meta, "migrations")
                WHERE store = s.store AND kind = 'expand' AND outcome = 'succeeded' ORDER BY id DESC LIMIT 1)
            WHERE s.store = \(store)
            """)
        guard !result.isEmpty, let model = result.value(0, "model_name"),
              let new = result.value(0, "new_definition"), let old = result.value(0, "old_definition") else {
            throw RollbackRefused(reasons: ["[rollbackVersionUnknown] the database has no record of '\(expansion.oldVersion)' or '\(expansion.newVersion)' of store \(store)"])
        }
        return RollbackVersions(
            model: model,
            new: try NativeModelLoader.parseVersion(new, name: expansion.newVersion, file: "the database's record of '\(expansion.newVersion)'"),
            old: try NativeModelLoader.parseVersion(old, name: expansion.oldVersion, file: "the database's record of '\(expansion.oldVersion)'")
        )
    }
}
