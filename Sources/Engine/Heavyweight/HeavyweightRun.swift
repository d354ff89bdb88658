import Foundation
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// Runs a heavyweight step pass by pass. Each pass commits with its checkpoint row in
/// `orchestrator.checkpoints` (`PassCheckpoints`); a run that finds checkpoints of the same step
/// (same step digest) skips the passes they record. A second session holds the write guard until the swap has committed.
struct HeavyweightRun {
    var migrator: StoreMigrator
    var step: PlannedStep
    /// The step's heavyweight work (`step.body`).
    var work: StagedWork
    var number: Int
    var count: Int
    var options: ApplyOptions
    var onProgress: (ProgressEvent) -> Void

    var connection: PostgresConnection { migrator.connection }
    var staging: String { work.stagingSchema }
    var passCount: Int { work.passes.count + 1 }

    /// Where the passes done are recorded, under the step's digest.
    var checkpoints: PassCheckpoints { PassCheckpoints(store: migrator.store, step: step) }

    /// 1. Unless Planning found an earlier run's staging schema to continue (and without
    ///    `--restart`, `StagedWork.resume`): the staging schema and the change triggers
    ///    (`ChangeTracking`), once whatever is in its place has proven to be this store's own.
    /// 2. A staging schema Planning found without checkpoints, or with another step's, stops.
    /// 3. Take the write guard. When continuing, stop (nothing changed) unless every old table
    ///    is still tracked, no write was logged since the last checkpoint and every staging
    ///    table holds the rows that checkpoint counted.
    /// 4. Run the passes not done yet; each checkpoint records the last write logged and the
    ///    rows of every staging table.
    /// 5. The swap, with the metadata, once the staging rows are counted again and the schema
    ///    the old store goes to has proven to be this store's own.
    /// 6. Release the guard; drop the triggers from the old store, and the old store when it
    ///    is not kept (`StoreCleanup`: deferred to the next run when a reader of the old store
    ///    keeps its lock).
    /// Online (`HeavyweightRun+Online`), the row triggers come with the change triggers, and
    /// the guard is taken only after the passes (stage 3 left out), the catch-up rounds, stage
    /// 3's build of indexes and foreign keys and more rounds: the last round and the rest of
    /// stage 3 run in the swap's transaction.
    /// Steps 2 and 3's checks run here; the rest are phases (`HeavyweightPhases`) run by `StepRunner`.
    func run(plan: MigrationPlan, started: Date) throws -> (rows: Int, deferred: DeferredCleanup?) {
        let decision: ResumeDecision
        switch work.resume {
        case .decided(let decided): decision = decided
        case .mismatch(let mismatch): throw mismatch
        }
        let tracking = work.changeTracking
        let catchUp = isOnline ? onlinePlan() : nil
        let postponed = catchUp == nil ? nil : PostponedSwitchOver.of(step, digest: step.digest, store: migrator.store, options: options, on: connection)
        try postponed?.hold(on: connection)
        if !decision.startsAfresh {
            try checkpoints.adopt(on: connection)
            if catchUp != nil, try !hasRowLog(catchUp) {
                throw StagingMismatch(staging: staging, reason: "holds passes of a run without --online, which logged no row keys")
            }
            try requireNoMappingLeftToRunWhole()
        }
        let state = HeavyweightPhases.State(last: decision.last { work.passes[$0 - 1].tablesWritten })
        // The prepare pass, run now, makes the staging tables with their write log.
        if decision.done[1] == nil { state.stagingLogged = true }
        defer { state.writeGuard?.close() }
        // Offline, the sessions of the write guard and of the first passes run at once open
        // while this one works.
        if catchUp == nil && !connection.isRehearsing {
            let jobs = jobs, logged = state.stagingLogged ?? true
            let work = ConcurrentPasses.sessions(in: work.phases, passes: work.passes, jobs: jobs) { ConcurrentPasses.parts(of: $0, in: self, jobs: jobs, guarded: true, stagingLogged: logged) }
            state.sessions = SessionsOpening(from: connection, count: 1 + work)
        }
        defer { state.sessions?.close() }
        // Online, no guard keeps writes out: the rounds map them again.
        if catchUp != nil, let last = state.last { try verify(since: last, tracking, state: state) }
        let phases = HeavyweightPhases(run: self, plan: plan, started: started, done: decision.done, catchUp: catchUp, postponed: postponed, state: state)
        let rows = try runner.run(phases.all())
        return (rows, state.deferred)
    }

    /// The swap's transaction, then the cleanup: the old store's place, the last round and
    /// stage 3 online (with `validate`, the validate pass left to the guard), the staging
    /// rows checked (offline), the metadata; `rows` the step's.
    func swap(plan: MigrationPlan, started: Date, rows: Int, catchUp: OnlineCatchUp?, validate: PlannedPass?, state: HeavyweightPhases.State) throws {
        let tracking = work.changeTracking
        let (old, role) = work.oldStorePlace(store: migrator.store)
        try options.executionPolicy.transaction(on: connection) {
            try connection.execute(ExecutionPolicy.setIdleTimeout(milliseconds: WriteGuard.swapIdleTimeout(options.executionPolicy)))
            if let last = state.last, catchUp == nil { try verifyStagingRows(against: last, tracking, state: state) }
            if catchUp == nil { try state.writeGuard?.requireNoWrites(seen: try changesSeen(tracking)) }
            if let catchUp {
                try finishOnline(catchUp, validate: validate)
                try PostponedSwitchOver.clear(store: migrator.store, on: connection)
            }
            let rowLog = try hasRowLog(work.catchUp)
            try StoreSchemas.requireOwnable(old, role: role, store: migrator.store, on: connection)
            try StoreAccess.carrying(schema: migrator.store, tables: nil, renamed: work.renamedTables, options: options, on: connection) {
                _ = try StatementPipeline.execute(work.swap.map(\.sql), on: connection)
            }
            if rowLog { for sql in OnlineCatchUp.afterSwap(store: migrator.store, old: old) { _ = try connection.execute(sql) } }
            try StoreSchemas.unregister(staging, on: connection)
            try checkpoints.cleared(on: connection)
            try StoreSchemas.register(old, role: role, store: migrator.store, version: step.from, chainFinished: false, on: connection)
            try migrator.record(step, plan: plan, rows: rows, started: started)
            // Last: a guard ended before this point may have let writes into the old store.
            try state.writeGuard?.requireHeld(on: connection)
        }
        state.writeGuard?.close()
        // The step is done: what this leaves is removed by the next `apply`, so a failure here
        // must not report the step failed.
        let views = work.newVersionViews.flatMap { HeavyweightExpansion(run: self, views: $0).dropRetired() }
        state.deferred = StoreCleanup.clean(old, role: role, policy: options.executionPolicy, on: connection) ?? views
    }

    /// A second session holding SHARE locks on the old store's tables (`WriteGuard`): reads go
    /// on, writes wait until the swap has committed. Dies with the process, so a crash never
    /// leaves it. Returns nil in a rehearsal, whose one transaction takes the locks itself.
    /// On a session of `opening` when given.
    func takeWriteGuard(_ tracking: ChangeTracking, opening: SessionsOpening? = nil) throws -> WriteGuard? {
        let statement = work.writeGuard
        if connection.isRehearsing {
            _ = try execute(statement)
            return nil
        }
        let writeGuard = try WriteGuard(statement: statement, from: connection, session: try opening?.take(), policy: options.executionPolicy)
        do {
            writeGuard.changesSeen = try changesSeen(tracking)
            try options.onWritesHeld?.reached()
        } catch {
            writeGuard.close()
            throw error
        }
        return writeGuard
    }

    /// `onRows`: the rows a streaming pass has made so far, after each batch; `gate`: asked
    /// between its FETCH batches, told `holdsWrites` (`StreamingPass`).
    func runPass(
        _ pass: PlannedPass, source: ModelVersion, destination: ModelVersion, onRows: @escaping (Int) -> Void = { _ in },
        gate: BatchGate? = nil, holdsWrites: Bool = false
    ) throws -> Int {
        var rows = 0
        // The prepare pass's DDL in one round trip: it counts no rows.
        for statement in pass.stage == .prepare ? [] : pass.statements {
            let affected = try execute(statement)
            if Self.countsRows(statement, of: pass) { rows = affected }
        }
        let policy = try pass.entityMapping.flatMap { name in try policyInstance(for: name) }
        switch pass.stage {
        case .createInstances:
            guard let stream = pass.stream else { return rows }
            let context = try self.context(for: pass, stream: stream, source: source, destination: destination)
            return try StreamingPass(context: context, policy: policy, sizing: options.streamingSizing, gate: gate, holdsWrites: holdsWrites, onBatch: onRows)
                .createInstances()
        case .createRelationships:
            // The policy's hook runs in the entity mapping's last stage 2 pass, the streaming one.
            guard pass.execution == .streaming, let policy, let mapping = pass.entityMapping else { return rows }
            let context = try self.context(for: pass, stream: nil, source: source, destination: destination)
            return try StreamingPass(context: context, policy: policy, sizing: options.streamingSizing, gate: gate, holdsWrites: holdsWrites) { _ in }
                .createRelationships(mappingName: mapping)
        case .validate:
            for other in work.passes where other.stage == .createInstances {
                guard let name = other.entityMapping, let policy = try policyInstance(for: name) else { continue }
                let context = try self.context(for: other, stream: nil, source: source, destination: destination)
                try policy.performCustomValidation(context)
                try context.writer.flush()
                try policy.end(context)
                try context.writer.flush()
            }
            return rows
        case .prepare:
            try executeTogether(pass.statements)
            return rows
        }
    }

    func execute(_ statement: PlannedStatement, on session: PostgresConnection? = nil) throws -> Int {
        do {
            return try (session ?? connection).execute(statement.sql).affectedRows
        } catch {
            throw PassFailure(statement: statement, underlying: error)
        }
    }

    /// `statements` in one round trip (`StatementPipeline`); a failure is its statement's
    /// `PassFailure`, as with `execute`.
    func executeTogether(_ statements: [PlannedStatement]) throws {
        guard !statements.isEmpty else { return }
        do {
            _ = try StatementPipeline.execute(statements.map(\.sql), on: connection)
        } catch let error as PostgresError {
            throw PassFailure(statement: statements.first { $0.sql.text == error.statement } ?? statements[0], underlying: error)
        }
    }

    func policyInstance(for entityMapping: String) throws -> (any EntityMigrationPolicy)? {
        guard let name = work.passes.first(where: { $0.entityMapping == entityMapping && $0.stream?.policy != nil })?.stream?.policy else { return nil }
        guard let policy = migrator.policies.make(name) else {
            throw PolicyError(message: "custom policy '\(name)' of entity mapping \(entityMapping) is not registered")
        }
        return policy
    }

    func context(for pass: PlannedPass, stream: StreamedMapping?, source: ModelVersion, destination: ModelVersion) throws -> EntityMappingContext {
        let now = try connection.execute("SELECT extract(epoch from now())::text AS now").value(0, "now").flatMap(Double.init) ?? 0
        let definition = work.passes.first { $0.entityMapping == pass.entityMapping && $0.stream != nil }?.stream
        let context = EntityMappingContext(
            stream: stream, entityMapping: pass.entityMapping ?? "",
            sourceEntity: definition?.sourceEntity ?? "", destinationEntity: definition?.destinationEntity ?? "",
            source: source, destination: destination, store: migrator.store, staging: staging,
            connection: connection, now: Date(timeIntervalSince1970: now)
        )
        context.writer.online = onlineInstances
        return context
    }

    /// The runner of the step's phases.
    var runner: StepRunner {
        StepRunner(store: migrator.store, connection: connection, options: options, onProgress: onProgress)
    }

    /// An event of `pass`, or of the catch-up rounds when nil.
    func progress(_ kind: ProgressEvent.Kind, pass number: Int, of pass: PlannedPass?) -> ProgressEvent {
        ProgressEvent(
            kind: kind, step: self.number, stepCount: count, stepKind: step.kind.rawValue, from: step.from, to: step.to,
            pass: number, passCount: passCount, stage: pass.map { .pass($0.stage) } ?? .catchUp, part: pass?.part, entityMapping: pass?.entityMapping,
            execution: pass?.execution, rowsTotal: pass.map { $0.sourceTable == nil ? nil : $0.rowEstimate } ?? nil
        )
    }
}

/// A statement of a pass failed.
struct PassFailure: Error, CustomStringConvertible {
    var statement: PlannedStatement
    var underlying: Error
    var description: String { String(describing: underlying) }
}
