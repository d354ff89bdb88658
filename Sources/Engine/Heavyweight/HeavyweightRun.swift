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

    /// 1. Unless an earlier run's staging schema is there to continue (and without
    ///    `--restart`): the staging schema and the change triggers (`ChangeTracking`), once
    ///    whatever is in its place has proven to be this store's own staging schema.
    /// 2. Read the checkpoints; a staging schema without them, or with another step's, stops.
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
    func run(plan: MigrationPlan, started: Date) throws -> (rows: Int, deferred: DeferredCleanup?) {
        let tracking = work.changeTracking
        let catchUp = isOnline ? onlinePlan() : nil
        let postponed = catchUp == nil ? nil : PostponedSwitchOver.of(step, digest: step.digest, store: migrator.store, options: options, on: connection)
        try postponed?.hold(on: connection)
        let stagingExists = try schemaExists(staging)
        let checkpoints = self.checkpoints
        let decision = try ResumeDecision.decide(
            staging: staging, fingerprint: checkpoints.digest, stagingExists: stagingExists, restart: options.restart,
            earlier: stagingExists && !options.restart ? try checkpoints.earlierRun(on: connection) : nil
        )
        if decision.startsAfresh {
            try reportingOnline(.install, when: catchUp != nil) { try installTracking(tracking, catchUp) }
        } else {
            try checkpoints.adopt(on: connection)
        }
        if !decision.startsAfresh, catchUp != nil, try !hasRowLog(catchUp) {
            throw StagingMismatch(staging: staging, reason: "holds passes of a run without --online, which logged no row keys")
        }
        if !decision.startsAfresh { try requireNoMappingLeftToRunWhole() }
        let done = decision.done
        var writeGuard = catchUp == nil ? try takeWriteGuard(tracking) : nil
        defer { writeGuard?.close() }
        var last = decision.last { work.passes[$0 - 1].tablesWritten }
        if let last { try verify(since: last, tracking) }

        let source = migrator.model.version(named: step.from ?? "")!
        let destination = migrator.model.version(named: step.to)!
        var rows = done.values.reduce(0) { $0 + $1.rows }
        var validate: (Int, PlannedPass)?
        var index = 0
        while index < work.passes.count {
            let pass = work.passes[index]
            if catchUp != nil && pass.stage == .validate {
                validate = (index + 1, pass)
                index += 1
                continue
            }
            // Set-based stage 1 passes, several at once: `ConcurrentPasses`.
            if jobs > 1, let range = ConcurrentPasses.range(in: work.passes, from: index) {
                for number in range.map({ $0 + 1 }) { if let earlier = done[number] { reportResumed(number, earlier) } }
                let (after, made) = try ConcurrentPasses(run: self, range: range, done: done, jobs: jobs, after: last, writeGuard: writeGuard).execute()
                last = after
                rows += made
                index = range.upperBound
                continue
            }
            defer { index += 1 }
            if let earlier = done[index + 1] {
                reportResumed(index + 1, earlier)
                continue
            }
            var event = progress(.passStarted, pass: index + 1, of: pass)
            onProgress(event)
            options.runRecord?.phase(of: event)
            let passStarted = Date()
            let validated = try validatePass(pass)
            let checkpoint = try options.executionPolicy.transaction(on: connection) {
                let passRows = try runPass(validated, number: index + 1, source: source, destination: destination, passStarted: passStarted)
                let checkpoint = try recordCheckpoint(validated, number: index + 1, rows: passRows, after: last, tracking)
                try writeGuard?.requireNoWrites(seen: checkpoint.changesSeen)
                return checkpoint
            }
            last = checkpoint
            rows += checkpoint.rows
            event.kind = .passFinished
            event.rowsDone = checkpoint.rows
            event.elapsedSeconds = Date().timeIntervalSince(passStarted)
            onProgress(event)
            try gate(pass: index + 1, of: pass).pass(BatchPosition(store: migrator.store, rowsDone: rows, holdsWrites: writeGuard != nil))
        }

        if let catchUp {
            last = try catchUpAndBuild(catchUp, after: last, tracking)
            if let postponed { last = try waitToSwitchOver(postponed, catchUp, after: last, tracking) }
            // Counting every staging row takes a scan: before the guard, not under it.
            if let last { try verifyStagingRows(against: last, tracking) }
            writeGuard = try reportingOnline(.writeGuard) { try takeWriteGuard(tracking) }
        }
        if let validate { onProgress(progress(.passStarted, pass: validate.0, of: validate.1)) }
        var swapEvent = ProgressEvent(
            kind: .passStarted, step: number, stepCount: count, stepKind: step.kind.rawValue, from: step.from, to: step.to,
            pass: passCount, passCount: passCount, stage: .swap
        )
        onProgress(swapEvent)
        options.runRecord?.phase(of: swapEvent)
        let swapStarted = Date()
        let (old, role) = work.oldStorePlace(store: migrator.store)
        try options.executionPolicy.transaction(on: connection) {
            try connection.execute(ExecutionPolicy.setIdleTimeout(milliseconds: WriteGuard.swapIdleTimeout(options.executionPolicy)))
            if let last, catchUp == nil { try verifyStagingRows(against: last, tracking) }
            if catchUp == nil { try writeGuard?.requireNoWrites(seen: try changesSeen(tracking)) }
            if let catchUp {
                try finishOnline(catchUp, validate: validate)
                try PostponedSwitchOver.clear(store: migrator.store, on: connection)
            }
            let rowLog = try hasRowLog(work.catchUp)
            try StoreSchemas.requireOwnable(old, role: role, store: migrator.store, on: connection)
            try StoreAccess.carrying(schema: migrator.store, tables: nil, renamed: work.renamedTables, options: options, on: connection) {
                for statement in work.swap { _ = try connection.execute(statement.sql) }
            }
            if rowLog { for sql in OnlineCatchUp.afterSwap(store: migrator.store, old: old) { _ = try connection.execute(sql) } }
            try StoreSchemas.unregister(staging, on: connection)
            try checkpoints.cleared(on: connection)
            try StoreSchemas.register(old, role: role, store: migrator.store, version: step.from, chainFinished: false, on: connection)
            try migrator.record(step, plan: plan, rows: rows, started: started)
            // Last: a guard ended before this point may have let writes into the old store.
            try writeGuard?.requireHeld(on: connection)
        }
        writeGuard?.close()
        // The step is done: what this leaves is removed by the next `apply`, so a failure here
        // must not report the step failed.
        let deferred = StoreCleanup.clean(old, role: role, policy: options.executionPolicy, on: connection)
        if let validate {
            var event = progress(.passFinished, pass: validate.0, of: validate.1)
            event.elapsedSeconds = Date().timeIntervalSince(swapStarted)
            onProgress(event)
        }
        swapEvent.kind = .passFinished
        swapEvent.elapsedSeconds = Date().timeIntervalSince(swapStarted)
        onProgress(swapEvent)
        return (rows, deferred)
    }

    /// A second session holding SHARE locks on the old store's tables (`WriteGuard`): reads go
    /// on, writes wait until the swap has committed. Dies with the process, so a crash never
    /// leaves it. Returns nil in a rehearsal, whose one transaction takes the locks itself.
    func takeWriteGuard(_ tracking: ChangeTracking) throws -> WriteGuard? {
        let statement = work.writeGuard
        if connection.isRehearsing {
            _ = try execute(statement)
            return nil
        }
        let writeGuard = try WriteGuard(statement: statement, from: connection, policy: options.executionPolicy)
        do {
            writeGuard.changesSeen = try changesSeen(tracking)
            try options.onWritesHeld?.reached()
        } catch {
            writeGuard.close()
            throw error
        }
        return writeGuard
    }

    func runPass(_ pass: PlannedPass, number: Int, source: ModelVersion, destination: ModelVersion, passStarted: Date) throws -> Int {
        var rows = 0
        for statement in pass.statements {
            let affected = try execute(statement)
            if Self.countsRows(statement, of: pass) { rows = affected }
        }
        let policy = try pass.entityMapping.flatMap { name in try policyInstance(for: name) }
        switch pass.stage {
        case .createInstances:
            guard let stream = pass.stream else { return rows }
            let context = try self.context(for: pass, stream: stream, source: source, destination: destination)
            return try StreamingPass(context: context, policy: policy, sizing: options.streamingSizing) { done in
                var event = progress(.rows, pass: number, of: pass)
                event.rowsDone = done
                event.elapsedSeconds = Date().timeIntervalSince(passStarted)
                onProgress(event)
            }.createInstances()
        case .createRelationships:
            // The policy's hook runs in the entity mapping's last stage 2 pass, the streaming one.
            guard pass.execution == .streaming, let policy, let mapping = pass.entityMapping else { return rows }
            let context = try self.context(for: pass, stream: nil, source: source, destination: destination)
            return try StreamingPass(context: context, policy: policy, sizing: options.streamingSizing) { _ in }
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

    /// A pass an earlier run committed: reported finished, not run again.
    func reportResumed(_ number: Int, _ earlier: Checkpoint) {
        var event = progress(.passFinished, pass: number, of: work.passes[number - 1])
        event.rowsDone = earlier.rows
        event.resumed = true
        onProgress(event)
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
