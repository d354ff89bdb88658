import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// Runs one lightweight step's `OnlinePlan` (docs/online-migrations.md):
/// 1. read the checkpoint: start at the beginning, or continue the interrupted run of this plan;
///    when continuing, reinstall the triggers of the phases done, in one transaction, so that
///    the rows written since keep being kept right by the same code;
/// 2. run each phase as it says: one short transaction, batches of `_pk` ranges each in its
///    own transaction, or a statement outside any transaction; every transaction under the
///    execution policy (`lock_timeout`, retried), each saving the checkpoint with its work;
/// 3. the last phase is the switch-over: it drops the triggers and records the new version, in
///    one transaction; with `--postpone-switch-over`, once `orchestrator control proceed`
///    lets it (`PostponedSwitchOver`).
struct OnlineRun {
    var migrator: StoreMigrator
    var step: PlannedStep
    var plan: MigrationPlan
    var options: ApplyOptions
    /// Step number and count, for the progress events.
    var number: Int
    var count: Int
    /// A `passStarted` and a `passFinished` event per phase (stage `online`, `phase` its
    /// summary), `rows` after each batch.
    var onProgress: (ProgressEvent) -> Void = { _ in }

    var connection: PostgresConnection { migrator.connection }
    var policy: ExecutionPolicy { options.executionPolicy }

    /// The statement that was running when a phase failed, for the step's error.
    final class Failure {
        var statement: PlannedStatement?
    }

    func run(started: Date, failure: Failure) throws -> Int {
        guard let online = step.phases, online.isSupported else {
            preconditionFailure("step to '\(step.to)' has no online form; OnlineNotSupported.check refuses it first")
        }
        let checkpoint = OnlineCheckpoint(store: migrator.store, step: step)
        let start = try checkpoint.read(on: connection)
        let live = Set(online.liveTriggers(after: start.phase))
        let reinstalled = online.phases[..<start.phase].flatMap { phase in phase.installs.contains(where: live.contains) ? phase.statements : [] }
        if !reinstalled.isEmpty {
            try policy.transaction(on: connection) {
                for statement in reinstalled {
                    failure.statement = statement
                    _ = try connection.execute(statement.sql)
                }
            }
        }
        for index in online.phases.indices where index < start.phase {
            var event = progress(.passFinished, phase: index)
            event.resumed = true
            onProgress(event)
        }
        let postponed = PostponedSwitchOver.of(step, digest: step.digest, store: migrator.store, options: options, on: connection)
        try postponed?.hold(on: connection)
        var rows = 0
        for index in online.phases.indices where index >= start.phase {
            let phase = online.phases[index]
            let isLast = index == online.phases.count - 1
            if isLast, let postponed { try waitToSwitchOver(postponed, phase: index) }
            var event = progress(.passStarted, phase: index)
            onProgress(event)
            options.runRecord?.phase(of: event)
            let phaseStarted = Date(), rowsBefore = rows
            switch phase.execution {
            case .transaction:
                rows += try policy.transaction(on: connection) {
                    var done = 0
                    try StoreAccess.carrying(schema: migrator.store, tables: isLast ? online.rebuiltTables : [], options: options, on: connection) {
                        for statement in phase.statements {
                            failure.statement = statement
                            done += try connection.execute(statement.sql).affectedRows
                        }
                    }
                    failure.statement = nil
                    if isLast {
                        try checkpoint.clear(on: connection)
                        try PostponedSwitchOver.clear(store: migrator.store, on: connection)
                        try migrator.record(step, plan: plan, rows: rows + done, started: started)
                        if let expansion = online.expansion { try ExpansionRecord.insert(expansion, store: migrator.store, on: connection) }
                    } else {
                        try checkpoint.save(.init(phase: index + 1), on: connection)
                    }
                    return done
                }
            case .batches:
                rows += try runBatches(phase, index: index, from: index == start.phase ? start.nextKey : nil, checkpoint: checkpoint, failure: failure) { done in
                    var batch = event
                    batch.kind = .rows
                    batch.rowsDone = done
                    batch.elapsedSeconds = Date().timeIntervalSince(phaseStarted)
                    onProgress(batch)
                }
            case .outsideTransaction:
                try buildConcurrently(phase, failure: failure)
                try policy.transaction(on: connection) { try checkpoint.save(.init(phase: index + 1), on: connection) }
            }
            event.kind = .passFinished
            event.rowsDone = rows - rowsBefore
            event.elapsedSeconds = Date().timeIntervalSince(phaseStarted)
            onProgress(event)
        }
        return rows
    }

    /// An event of phase `index` of the step's online plan.
    private func progress(_ kind: ProgressEvent.Kind, phase index: Int) -> ProgressEvent {
        let phases = step.phases?.phases ?? []
        return ProgressEvent(
            kind: kind, step: number, stepCount: count, stepKind: step.kind.rawValue, from: step.from, to: step.to,
            pass: index + 1, passCount: phases.count, stage: .online, phase: phases[index].summary
        )
    }

    /// The batches cover the keys present when the phase starts (up to their largest), in
    /// keyset batches (`KeysetBatches`); rows inserted later go through the phase's trigger,
    /// installed before. The checkpoint keeps the next batch's lower bound, as it always has.
    private func runBatches(
        _ phase: OnlinePhase, index: Int, from resumeKey: Int64?, checkpoint: OnlineCheckpoint, failure: Failure, onBatch: (Int) -> Void
    ) throws -> Int {
        guard let batches = phase.batches else { preconditionFailure("batched phase '\(phase.summary)' has no statement") }
        let bounds = try connection.execute("SELECT max(\(ident: "_pk")) AS high FROM \(ident: batches.schema, batches.table)")
        var rows = 0
        if let high = bounds.int(0, "high") {
            var runner = KeysetBatches(
                connection: connection, policy: policy, sizing: options.batchSizing, gate: gate(phase: index), store: migrator.store
            )
            rows = try runner.run(after: resumeKey.map { $0 - 1 }, { after, limit in
                guard let keys = try KeysetBatches.keys(of: batches.schema, batches.table, after: after, through: high, limit: limit, on: connection) else {
                    return nil
                }
                let last = keys.upperBound
                let statement = PlannedStatement(batches.sql(from: keys.lowerBound, below: last + 1), lock: phase.lock, summary: phase.summary)
                failure.statement = statement
                for setup in batches.setup { try connection.execute(setup) }
                let done = try connection.execute(statement.sql).affectedRows
                try checkpoint.save(.init(phase: index, nextKey: last + 1), on: connection)
                return (done, last)
            }, onBatch: onBatch)
        }
        failure.statement = nil
        try policy.transaction(on: connection) { try checkpoint.save(.init(phase: index + 1), on: connection) }
        return rows
    }

    /// Asks the run's hooks between batches; a pause is reported as a `paused` event of the phase.
    private func gate(phase index: Int) -> BatchGate {
        BatchGate(options: options, store: migrator.store, connection: connection) { reason in
            var event = progress(.paused, phase: index)
            event.reason = reason
            onProgress(event)
        }
    }

    /// `--postpone-switch-over`: every phase before the switch-over is done, and the triggers
    /// keep the new columns and tables right while the application writes; wait for the proceed.
    private func waitToSwitchOver(_ postponed: PostponedSwitchOver, phase index: Int) throws {
        options.runRecord?.phase(of: progress(.passStarted, phase: index))
        try postponed.wait(gate: gate(phase: index), position: BatchPosition(store: migrator.store, rowsDone: 0, holdsWrites: false)) { reason in
            var event = progress(.paused, phase: index)
            event.reason = reason
            onProgress(event)
        }
    }

    /// `CREATE … CONCURRENTLY` cannot run in a transaction; a failed or interrupted build
    /// leaves an invalid index, dropped (concurrently) before the next attempt.
    private func buildConcurrently(_ phase: OnlinePhase, failure: Failure) throws {
        guard let index = phase.index, let statement = phase.statements.first else {
            preconditionFailure("concurrent phase '\(phase.summary)' names no index")
        }
        let schema = migrator.store
        failure.statement = statement
        // The session's own bound (`LockWaitBound`) comes back afterwards, not the server's default.
        let sessionBound = try connection.execute("SELECT current_setting('lock_timeout') AS value").value(0, "value") ?? "0"
        try connection.execute("SET lock_timeout = \(literal: options.lockTimeoutMilliseconds)")
        defer { _ = try? connection.execute("SELECT set_config('lock_timeout', \(sessionBound), false)") }
        try policy.retrying {
            let state = try connection.execute("""
                SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                WHERE c.relname = \(index) AND c.relnamespace = to_regnamespace(\(quoteIdentifier(schema)))
                """)
            switch state.rows.first?.first {
            case "t"?:
                return
            case "f"?:
                _ = try connection.execute("DROP INDEX CONCURRENTLY IF EXISTS \(ident: schema, index)")
            default:
                break
            }
            _ = try connection.execute(statement.sql)
        }
        failure.statement = nil
    }
}
