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

    /// The phases to `StepRunner`, after reinstalling the triggers of those done: each phase
    /// by its execution, the last one the switch-over (after the postponement's wait, with
    /// `--postpone-switch-over`).
    func run(started: Date, failure: StepRunner.Failure) throws -> Int {
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
        let postponed = PostponedSwitchOver.of(step, digest: step.digest, store: migrator.store, options: options, on: connection)
        try postponed?.hold(on: connection)
        var phases: [RunPhase] = []
        for index in online.phases.indices {
            let phase = online.phases[index]
            let isLast = index == online.phases.count - 1
            let kind = isLast ? RunPhase.Kind.switchOver : RunPhase.Kind(phase.execution)
            let state: RunPhase.Start = index < start.phase ? .resumed(rows: 0) : .run
            if isLast, let postponed {
                phases.append(RunPhase(kind: .waitToSwitchOver, event: progress(.passStarted, phase: index), reporting: .recorded, start: { state == .run ? .run : .skipped }) { context in
                    try waitToSwitchOver(postponed, context: context)
                    return 0
                })
            }
            phases.append(RunPhase(kind: kind, event: progress(.passStarted, phase: index), start: { state }) { context in
                try run(phase, kind, index: index, from: index == start.phase ? start.nextKey : nil, checkpoint: checkpoint, started: started, context: context)
            })
        }
        return try StepRunner(store: migrator.store, connection: connection, options: options, onProgress: onProgress, failure: failure).run(phases)
    }

    /// Phase `index`'s work, by its kind; returns its rows.
    private func run(
        _ phase: OnlinePhase, _ kind: RunPhase.Kind, index: Int, from resumeKey: Int64?, checkpoint: OnlineCheckpoint, started: Date, context: PhaseContext
    ) throws -> Int {
        switch kind {
        case .transaction, .switchOver:
            let isLast = kind == .switchOver
            let online = step.phases
            return try policy.transaction(on: connection) {
                var done = 0
                try StoreAccess.carrying(schema: migrator.store, tables: isLast ? online?.rebuiltTables ?? [] : [], options: options, on: connection) {
                    for statement in phase.statements {
                        context.running(statement)
                        done += try connection.execute(statement.sql).affectedRows
                    }
                }
                context.running(nil)
                if isLast {
                    try checkpoint.clear(on: connection)
                    try PostponedSwitchOver.clear(store: migrator.store, on: connection)
                    try migrator.record(step, plan: plan, rows: context.rowsBefore + done, started: started)
                    if let expansion = online?.expansion { try ExpansionRecord.insert(expansion, store: migrator.store, on: connection) }
                } else {
                    try checkpoint.save(.init(phase: index + 1), on: connection)
                }
                return done
            }
        case .batches:
            return try runBatches(phase, index: index, from: resumeKey, checkpoint: checkpoint, context: context)
        case .outsideTransaction:
            try buildConcurrently(phase, context: context)
            try policy.transaction(on: connection) { try checkpoint.save(.init(phase: index + 1), on: connection) }
            return 0
        case .waitToSwitchOver, .install, .pass, .concurrentPasses, .catchUpRounds, .stageThreeBuild, .writeGuard, .swap:
            preconditionFailure("a lightweight online phase is never a \(kind.name) phase")
        }
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
    private func runBatches(_ phase: OnlinePhase, index: Int, from resumeKey: Int64?, checkpoint: OnlineCheckpoint, context: PhaseContext) throws -> Int {
        guard let batches = phase.batches else { preconditionFailure("batched phase '\(phase.summary)' has no statement") }
        let bounds = try connection.execute("SELECT max(\(ident: "_pk")) AS high FROM \(ident: batches.schema, batches.table)")
        var rows = 0
        if let high = bounds.int(0, "high") {
            var runner = KeysetBatches(connection: connection, policy: policy, sizing: options.batchSizing, gate: context.gate, store: migrator.store)
            rows = try runner.run(after: resumeKey.map { $0 - 1 }, { after, limit in
                guard let keys = try KeysetBatches.keys(of: batches.schema, batches.table, after: after, through: high, limit: limit, on: connection) else {
                    return nil
                }
                let last = keys.upperBound
                let statement = PlannedStatement(batches.sql(from: keys.lowerBound, below: last + 1), lock: phase.lock, summary: phase.summary)
                context.running(statement)
                for setup in batches.setup { try connection.execute(setup) }
                let done = try connection.execute(statement.sql).affectedRows
                try checkpoint.save(.init(phase: index, nextKey: last + 1), on: connection)
                return (done, last)
            }, onBatch: context.rows)
        }
        context.running(nil)
        try policy.transaction(on: connection) {
            if let statistics = batches.statistics { _ = try connection.execute(statistics) }
            try checkpoint.save(.init(phase: index + 1), on: connection)
        }
        return rows
    }

    /// `--postpone-switch-over`: every phase before the switch-over is done, and the triggers
    /// keep the new columns and tables right while the application writes; wait for the proceed.
    private func waitToSwitchOver(_ postponed: PostponedSwitchOver, context: PhaseContext) throws {
        try postponed.wait(gate: context.gate, position: BatchPosition(store: migrator.store, rowsDone: 0, holdsWrites: false), onWaiting: context.paused)
    }

    /// `CREATE … CONCURRENTLY` cannot run in a transaction; a failed or interrupted build
    /// leaves an invalid index, dropped (concurrently) before the next attempt.
    private func buildConcurrently(_ phase: OnlinePhase, context: PhaseContext) throws {
        guard let index = phase.index, let statement = phase.statements.first else {
            preconditionFailure("concurrent phase '\(phase.summary)' names no index")
        }
        let schema = migrator.store
        context.running(statement)
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
        context.running(nil)
    }
}
