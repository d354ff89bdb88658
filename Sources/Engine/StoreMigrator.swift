import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// What `apply` did.
public struct ApplyReport: Sendable {
    /// The plan as computed under the store's lock: the one that ran.
    public var plan: MigrationPlan
    public var appliedSteps: [AppliedStep]
}

public struct AppliedStep: Sendable {
    public var step: PlannedStep
    public var rows: Int
    public var durationMilliseconds: Int
}

/// A step failed and rolled back; the store is left at the version the step started from.
public struct StepFailure: Error, CustomStringConvertible {
    public var stepNumber: Int
    public var stepCount: Int
    public var step: PlannedStep
    public var statement: PlannedStatement?
    public var underlying: Error
    /// A heavyweight step's staging schema, holding the passes that committed before the failure.
    public var partialWork: String?

    public var description: String {
        var text = "step \(stepNumber) of \(stepCount) (\(step.kind.rawValue) \(step.from.map { "'\($0)' -> " } ?? "")'\(step.to)') failed"
        if let statement { text += " at \"\(statement.summary)\"" }
        // Earlier steps of a chain have committed; this one rolled back.
        var state = step.from.map { "the store is at '\($0)'" } ?? "nothing was created"
        if let partialWork {
            state += "; the passes done are kept in schema \(partialWork): apply again continues after them, apply --restart starts over"
        }
        return text + ": \(underlying); \(state)"
    }
}

/// Plan blockers: the store needs a migration that cannot run.
public struct NotExecutable: Error, CustomStringConvertible {
    public var blockers: [String]
    public var description: String { blockers.joined(separator: "; ") }
}

/// The plan drops rows or values and `ApplyOptions.allowDataLoss` is false: nothing was changed.
public struct DataLossNotAllowed: Error, CustomStringConvertible {
    /// Each lossy step as "step n of m ('A' -> 'B')" with what it loses.
    public var losses: [String]

    public var description: String {
        "the migration loses data: \(losses.joined(separator: "; ")); nothing was changed (run again with --allow-data-loss to accept the loss)"
    }

    static func check(_ plan: MigrationPlan, options: ApplyOptions) throws {
        guard !options.allowDataLoss else { return }
        var losses: [String] = []
        for (index, step) in plan.steps.enumerated() {
            let lost = step.hazards.filter(\.isDataLoss).map(\.message)
            guard !lost.isEmpty else { continue }
            let from = step.from.map { "'\($0)' -> " } ?? ""
            losses.append("step \(index + 1) of \(plan.steps.count) (\(from)'\(step.to)') \(lost.joined(separator: ", "))")
        }
        if !losses.isEmpty { throw DataLossNotAllowed(losses: losses) }
    }
}

/// Runs plans against PostgreSQL under the store's advisory lock.
public struct StoreMigrator {
    public var connection: PostgresConnection
    public var model: VersionedModel
    public var store: String
    public var targetVersion: String?

    /// Mapping models found for the model; each on the way runs as a heavyweight step, never
    /// inferred past.
    public var explicitMappings: [ExplicitMapping]
    /// Custom entity migration policies, by the names mapping models give them.
    public var policies: PolicyRegistry = .shared
    /// Run every entity mapping of a heavyweight step through the streaming path.
    public var forceStreaming = false
    /// Keep the old store as `<store>~` after a heavyweight step.
    public var keepBackup = true

    public init(
        connection: PostgresConnection, model: VersionedModel, store: String, targetVersion: String? = nil,
        explicitMappings: [ExplicitMapping] = []
    ) {
        self.connection = connection
        self.model = model
        self.store = store
        self.targetVersion = targetVersion
        self.explicitMappings = explicitMappings
    }

    /// The plan for the store as it is now, read without taking any lock or writing anything.
    public func plan() throws -> MigrationPlan {
        let snapshot = try StoreCatalog.snapshot(store: store, on: connection)
        // An interrupted `apply --online` left its step half in the store, by design: its
        // checkpoint, which names the plan, decides whether the run may continue.
        if try OnlineCheckpoint.unfinished(store: store, on: connection) == nil {
            try DriftCheck.requireNoBlockingDrift(snapshot, model: model, on: connection)
        }
        let recorded = try StoreCatalog.recordedVersions(model: model.name, on: connection)
        var plan = try Planner.plan(
            model: model, targetVersion: targetVersion, snapshot: snapshot, recordedVersions: recorded,
            explicitMappings: explicitMappings,
            options: PlanningOptions(registeredPolicies: policies.names, forceStreaming: forceStreaming, keepBackup: keepBackup)
        )
        plan.blockers += try StoreSchemas.blockers(of: plan, on: connection)
        if plan.status == .migrationRequired {
            for index in plan.steps.indices {
                plan.steps[index].passesDone = try HeavyweightRun.passesDone(of: plan.steps[index], on: connection)
            }
        }
        return plan
    }

    /// 1. Plan without writing anything (but what a crash after a heavyweight swap left,
    ///    `StoreSchemas.removeLeftovers`): a store of an unknown version, a schema that is not a
    ///    store, a plan that cannot run or one that loses data without `allowDataLoss` stops
    ///    here, with the database untouched.
    /// 2. Make sure the metadata schema exists.
    /// 3. Take the store's advisory lock (waiting at most `lockWaitSeconds`, telling `onLockWait`
    ///    who holds it), then re-read the metadata and re-plan under it (another process may
    ///    have migrated the store meanwhile).
    /// 4. Run each step in one transaction with its metadata and history.
    ///
    /// With `options.expectedPlan` (`apply --plan`), the plans of steps 1 and 3 must be the
    /// saved one, or nothing is changed.
    public func apply(
        options: ApplyOptions = ApplyOptions(), onStep: (Int, Int, PlannedStep) -> Void = { _, _, _ in },
        onProgress: (ProgressEvent) -> Void = { _ in }, onLockWait: ([AdvisoryLockHolder]) -> Void = { _ in }
    ) throws -> ApplyReport {
        try StoreSchemas.removeLeftovers(store: store, on: connection, lockWaitSeconds: options.lockWaitSeconds, onLockWait: onLockWait)
        let preliminary = try plan()
        try options.expectedPlan?.requireSame(as: preliminary, migrator: self)
        if preliminary.isUpToDate { return ApplyReport(plan: preliminary, appliedSteps: []) }
        guard preliminary.isExecutable else { throw NotExecutable(blockers: preliminary.blockers) }
        try DataLossNotAllowed.check(preliminary, options: options)
        try OnlineNotSupported.check(preliminary, options: options)
        try MetadataSchema.bootstrap(on: connection)
        let lock = StoreLock(store: store, connection: connection)
        try lock.acquire(waitingAtMost: options.lockWaitSeconds, onWait: onLockWait)
        defer { lock.release() }

        let plan = try self.plan()
        try options.expectedPlan?.requireSame(as: plan, migrator: self)
        guard plan.isExecutable else { throw NotExecutable(blockers: plan.blockers) }
        try DataLossNotAllowed.check(plan, options: options)
        try OnlineNotSupported.check(plan, options: options)
        var applied: [AppliedStep] = []
        for (index, step) in plan.steps.enumerated() {
            onStep(index + 1, plan.steps.count, step)
            let event = ProgressEvent(
                kind: .stepStarted, step: index + 1, stepCount: plan.steps.count, stepKind: step.kind.rawValue,
                from: step.from, to: step.to, pass: 1, passCount: 1, stage: .step, rowsTotal: step.rowEstimate
            )
            onProgress(event)
            let done = try run(step, number: index + 1, of: plan.steps.count, plan: plan, options: options, onProgress: onProgress)
            applied.append(done)
            var finished = event
            finished.kind = .stepFinished
            finished.rowsDone = done.rows
            finished.elapsedSeconds = Double(done.durationMilliseconds) / 1000
            onProgress(finished)
        }
        return ApplyReport(plan: plan, appliedSteps: applied)
    }

    func run(
        _ step: PlannedStep, number: Int, of count: Int, plan: MigrationPlan, options: ApplyOptions,
        onProgress: (ProgressEvent) -> Void = { _ in }
    ) throws -> AppliedStep {
        let started = Date()
        if !step.passes.isEmpty {
            do {
                let rows = try withoutActuallyEscaping(onProgress) { onProgress in
                    try HeavyweightRun(migrator: self, step: step, number: number, count: count, options: options, onProgress: onProgress)
                        .run(plan: plan, started: started)
                }
                return AppliedStep(step: step, rows: rows, durationMilliseconds: milliseconds(since: started))
            } catch let error as StagingMismatch {
                throw error
            } catch let error as ForeignSchema {
                throw error
            } catch {
                try? recordFailure(step, plan: plan, started: started, error: error)
                var failure = StepFailure(
                    stepNumber: number, stepCount: count, step: step, statement: (error as? PassFailure)?.statement,
                    underlying: (error as? PassFailure)?.underlying ?? error
                )
                failure.partialWork = step.stagingSchema
                throw failure
            }
        }
        if let done = try runOnline(step, number: number, of: count, plan: plan, options: options, started: started) {
            return done
        }
        var failedStatement: PlannedStatement?
        do {
            let rows = try options.executionPolicy.transaction(on: connection) {
                var rows = 0
                for statement in step.statements {
                    failedStatement = statement
                    rows += try connection.execute(statement.sql).affectedRows
                }
                failedStatement = nil
                try record(step, plan: plan, rows: rows, started: started)
                return rows
            }
            return AppliedStep(step: step, rows: rows, durationMilliseconds: milliseconds(since: started))
        } catch {
            try? recordFailure(step, plan: plan, started: started, error: error)
            throw StepFailure(stepNumber: number, stepCount: count, step: step, statement: failedStatement, underlying: error)
        }
    }

    /// Metadata and history, in the step's transaction.
    func record(_ step: PlannedStep, plan: MigrationPlan, rows: Int, started: Date) throws {
        for statement in StepRecord(store: store, model: model, step: step, plan: plan).metadata() {
            _ = try connection.execute(statement)
        }
        try insertHistory(step, plan: plan, rows: rows, started: started, outcome: "succeeded", error: nil)
        if step == plan.steps.last { try StoreSchemas.finishChain(store: store, on: connection) }
    }

    func recordFailure(_ step: PlannedStep, plan: MigrationPlan, started: Date, error: Error) throws {
        try insertHistory(step, plan: plan, rows: 0, started: started, outcome: "failed", error: String(describing: error))
    }

    func insertHistory(_ step: PlannedStep, plan: MigrationPlan, rows: Int, started: Date, outcome: String, error: String?) throws {
        let startedText = ISO8601DateFormatter.withFractionalSeconds.string(from: started)
        _ = try connection.execute(StepRecord(store: store, model: model, step: step, plan: plan).history(
            rows: "\(rows)", startedAt: "\(startedText)::timestamptz", durationMilliseconds: "\(milliseconds(since: started))",
            appliedBy: "current_user || ' (' || \(Self.operatingSystemUser) || ')'", outcome: outcome, error: error
        ))
    }

    static var operatingSystemUser: String {
        let environment = ProcessInfo.processInfo.environment
        let user = environment["USER"] ?? environment["LOGNAME"] ?? "unknown"
        return "\(user)@\(ProcessInfo.processInfo.hostName)"
    }
}

func milliseconds(since start: Date) -> Int {
    Int((Date().timeIntervalSince(start) * 1000).rounded())
}

extension ISO8601DateFormatter {
    nonisolated(unsafe) static let withFractionalSeconds: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
}
