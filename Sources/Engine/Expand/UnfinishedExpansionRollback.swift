import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// `rollback` of a lightweight `apply --expand` stopped before its switch-over (killed,
/// `--pause-timeout`, a failure): its online checkpoint names the run, and the model (`model`,
/// `rollback --model`) the step it ran, since the new version is recorded in the database only
/// at the switch-over. The store goes back to the old version's layout
/// (`UnfinishedExpandRollbackPlan`), its metadata never left it.
/// 1. The run's checkpoint; the model's expanded plan of the same step, whose digest must be
///    the checkpoint's (else `[rollbackUnfinishedOtherPlan]`, nothing changed).
/// 2. A dry run rehearses 4 and rolls it back: the statements, what would be lost (counted).
/// 3. A run still holding the store's lock is named and refused, unless `force` ends it; then
///    the store's lock, and the sessions holding locks on its tables or the plain views:
///    refused unless `force`.
/// 4. One transaction under `lock_timeout`: losses counted (refused without consent), part 1,
///    the catalog read again, part 2, the store compared with the old version's contract (any
///    difference refuses: `[rollbackUnfinishedNotUndoable]`, nothing changed), the checkpoint
///    deleted, a `rollback` row in the history.
extension ExpansionRollback {
    func rollBackUnfinished(
        _ run: (from: String, to: String), dryRun: Bool, allowDataLoss: Bool, force: Bool, options: ApplyOptions, started: Date,
        onLockWait: ([AdvisoryLockHolder]) -> Void
    ) throws -> RollbackReport {
        guard let model else { throw UnfinishedExpansionNeedsModel(store: store, from: run.from, to: run.to) }
        guard let old = model.version(named: run.from), let new = model.version(named: run.to) else {
            throw RollbackRefused(reasons: ["[rollbackVersionUnknown] \(model.name) has no version '\(run.from)' or '\(run.to)' (the versions of the run stopped on store \(store))"])
        }
        let expected = try ContractCatalogs.shared.contract(of: old, on: connection)
        var sessions: [OldVersionSession] = []
        let lock = StoreLock(store: store, connection: connection)
        if !dryRun {
            let runs = try connection.advisoryLockHolders(key: lock.key).map {
                OldVersionSession(pid: $0.pid, applicationName: $0.applicationName, user: $0.user ?? "", state: $0.state ?? "")
            }
            if !runs.isEmpty {
                guard force else { throw ExpandedRunWaiting(store: store, sessions: runs, runBeforeSwitchOver: "the apply --expand run of '\(run.from)' -> '\(run.to)'") }
                try ExpansionCompletion.end(runs, on: connection)
                sessions = runs
            }
        }
        if !dryRun { try lock.acquire(waitingAtMost: options.lockWaitSeconds, onWait: onLockWait) }
        defer { if !dryRun { lock.release() } }
        let triggers = try runTriggers(model: model, run: run, old: old)
        if !dryRun {
            let viewsSchema = OldVersionViews.schemaName(store: store, version: old.name)
            let users = try ExpansionCompletion.sessions(using: store, on: connection) + ExpansionCompletion.sessions(using: viewsSchema, on: connection)
            let distinct = users.reduce(into: [OldVersionSession]()) { if !$0.contains($1) { $0.append($1) } }
            if !distinct.isEmpty {
                guard force else { throw StoreInUseForRollback(store: store, sessions: distinct) }
                try ExpansionCompletion.end(distinct, on: connection)
                sessions += distinct
            }
        }
        var done: (statements: [PlannedStatement], losses: [CountedLoss]) = ([], [])
        do {
            try options.executionPolicy.transaction(on: connection) {
                let plan = try UnfinishedExpandRollbackPlan(
                    from: new, to: old, store: store, found: try CatalogReader.read(schema: store, on: connection), triggers: triggers
                )
                let losses = try plan.losses.map { CountedLoss(loss: $0, rows: Int(try connection.execute($0.counting).int(0, "rows") ?? 0)) }
                if !dryRun { try Self.refuse(losses, allowDataLoss: allowDataLoss) }
                for statement in plan.statements { try connection.execute(statement.sql) }
                let contract = plan.constraints(found: try CatalogReader.read(schema: store, on: connection), expected: expected, store: store)
                for statement in contract { try connection.execute(statement.sql) }
                let left = StoreDrift.compare(expected: expected, found: try CatalogReader.read(schema: store, on: connection)).filter(\.isBlocking)
                guard left.isEmpty else {
                    throw RollbackRefused(reasons: left.map { "[rollbackUnfinishedNotUndoable] store \(store) would differ from '\(old.name)': \($0)" })
                }
                done = (plan.statements + contract, losses)
                if dryRun { throw Rehearsed() }
                try connection.execute("DELETE FROM \(ident: MetadataSchema.schema, CheckpointTable.table) WHERE store = \(store) AND kind = 'online'")
                try PostponedSwitchOver.clear(store: store, on: connection)
                try StoreMetadataWriter.recordEvent(
                    store: store, kind: "rollback", from: (new.name, VersionHash.hashes(of: new).model), to: (old.name, VersionHash.hashes(of: old).model),
                    statements: done.statements.map(\.sql), started: started, on: connection
                )
            }
        } catch is Rehearsed {}
        return RollbackReport(
            store: store, fromVersion: new.name, version: old.name, viewsSchema: OldVersionViews.schemaName(store: store, version: old.name), isDryRun: dryRun,
            statements: done.statements.map(\.sql.text), losses: done.losses, endedSessions: sessions, durationMilliseconds: milliseconds(since: started)
        )
    }

    /// The triggers of the run's step: the model's `apply --expand` plan of it, whose digest
    /// must be the one the checkpoint records (an earlier release's accepted).
    private func runTriggers(model: VersionedModel, run: (from: String, to: String), old: ModelVersion) throws -> [OnlineTrigger] {
        let recorded = try connection.execute("""
            SELECT step_digest FROM \(ident: MetadataSchema.schema, CheckpointTable.table) WHERE store = \(store) AND kind = 'online'
            """)
        guard let digest = recorded.value(0, "step_digest") else { throw NothingToRollBack(store: store) }
        let plan = try StoreMigrator(connection: connection, model: model, store: store, targetVersion: run.to).plan(mode: .expand)
        guard plan.storeVersion == old.name, plan.steps.count == 1, let step = plan.steps.first, let online = step.phases, online.expansion != nil,
              step.digest == digest || step.earlierDigests.contains(digest) else {
            throw RollbackRefused(reasons: [
                "[rollbackUnfinishedOtherPlan] the run stopped on store \(store) ('\(run.from)' -> '\(run.to)') is not the apply --expand the model plans for that step (an apply --online run, or another model): finish it with the apply that started it",
            ])
        }
        return online.phases.flatMap(\.installs)
    }
}

/// A dry run's transaction, rolled back once it ran.
private struct Rehearsed: Error {}

/// `rollback` of a lightweight `apply --expand` stopped before its switch-over, without
/// `--model`: the new version is not in the database yet. Nothing was changed.
public struct UnfinishedExpansionNeedsModel: Error, CustomStringConvertible {
    public var store: String
    public var from: String
    public var to: String

    public var description: String {
        "store \(store): an apply --expand of '\(from)' -> '\(to)' stopped before its switch-over; rollback needs the model it ran with "
            + "(rollback --model PATH --store \(store)) to know its step; nothing was changed"
    }
}
