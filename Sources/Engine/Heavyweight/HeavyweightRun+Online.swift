import Foundation
import JSONRendering
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// `apply --online` of a heavyweight step (`OnlineCatchUp`, docs/online-migrations.md): the
/// passes run with the old store writable, catch-up rounds map the rows written meanwhile
/// again, and the last round, stage 3 and the swap run under the write guard.
extension HeavyweightRun {
    /// Rounds before the write guard is taken whatever is left, so that a store written
    /// faster than the rounds map it still finishes.
    static let maximumRounds = 8

    var isOnline: Bool { work.runsOnline }

    /// The step's catch-up plan: `OnlineNotSupported.check` refused the plan before any step
    /// ran when a heavyweight step has none.
    func onlinePlan() -> OnlineCatchUp {
        guard let catchUp = work.catchUp else { preconditionFailure("apply --online refuses heavyweight steps without a catch-up plan") }
        return catchUp
    }

    /// Whether the staging schema holds the row change log (the run that made it was online).
    func hasRowLog(_ catchUp: OnlineCatchUp?) throws -> Bool {
        guard let catchUp else { return false }
        return try connection.execute(catchUp.isInstalled).bool(0, "present") == true
    }

    /// Rounds while more than `remainder` (default `options.catchUpRemainder`) writes are
    /// logged after the last one, at most `rounds`; each commits with the position it reached
    /// and the staging rows counted into the last checkpoint, so a resumed run continues from
    /// there. Returns that checkpoint as the last round left it.
    func catchUp(
        _ catchUp: OnlineCatchUp, after last: Checkpoint?, _ tracking: ChangeTracking, remainder: Int? = nil, rounds: Int = maximumRounds,
        onRound: (Int, Int) -> Void
    ) throws -> Checkpoint? {
        var last = last
        for round in 1...rounds {
            let (pending, upto) = try pendingWrites(catchUp)
            guard pending > remainder ?? options.catchUpRemainder else { break }
            let rows = try options.executionPolicy.transaction(on: connection) {
                try roundWithoutForeignKeys { try runRound(catchUp, upTo: upto) }
                return try recountLastCheckpoint(tracking)
            }
            last?.tableRows = rows
            onRound(round, pending)
            try runner.gate(for: catchUpEvent).pass(BatchPosition(store: migrator.store, rowsDone: pending, holdsWrites: false))
        }
        return last
    }

    /// The `passStarted` event of the catch-up rounds, and of the wait for the proceed.
    var catchUpEvent: ProgressEvent { progress(.passStarted, pass: passCount, of: nil) }

    /// A round done: a `rows` event of the rounds, with the writes it mapped.
    func reportRound(_: Int, pending: Int) {
        var event = progress(.rows, pass: passCount, of: nil)
        event.rowsDone = pending
        onProgress(event)
    }

    /// `--postpone-switch-over`, after the rounds and the build: wait for the proceed, with
    /// rounds meanwhile, so that the last one (under the write guard) stays short.
    func waitToSwitchOver(_ postponed: PostponedSwitchOver, _ catchUp: OnlineCatchUp, after last: Checkpoint?, _ tracking: ChangeTracking, context: PhaseContext) throws -> Checkpoint? {
        var last = last
        if let views = work.newVersionViews { try HeavyweightExpansion(run: self, views: views).serve() }
        try postponed.wait(gate: context.gate, position: BatchPosition(store: migrator.store, rowsDone: 0, holdsWrites: false), onWaiting: context.paused) {
            // Serving the new version's views: every write is mapped again at the next round.
            last = try self.catchUp(catchUp, after: last, tracking, remainder: work.newVersionViews == nil ? nil : 0, onRound: { _, _ in })
        }
        return last
    }

    /// The `passStarted` event of `stage`, an online phase outside the passes (the install,
    /// stage 3's build, the write guard) or the swap.
    func stageEvent(_ stage: ProgressEvent.Stage) -> ProgressEvent {
        ProgressEvent(
            kind: .passStarted, step: number, stepCount: count, stepKind: step.kind.rawValue, from: step.from, to: step.to,
            pass: stage == .install ? 1 : passCount, passCount: passCount, stage: stage
        )
    }

    /// Writes logged after the last round, and the last one's id.
    func pendingWrites(_ catchUp: OnlineCatchUp) throws -> (pending: Int, upto: Int) {
        let result = try connection.execute(catchUp.pending)
        return (Int(result.int(0, "pending") ?? 0), Int(result.int(0, "upto") ?? 0))
    }

    /// One round in the caller's transaction: the keys logged up to `upto`, then the round's
    /// statements and streamed entity mappings restricted to them. Returns the keys' count.
    /// `underGuard`: the last round, which runs the entity mappings of `rerunWhole` whole.
    @discardableResult
    func runRound(_ catchUp: OnlineCatchUp, upTo upto: Int, underGuard: Bool = false) throws -> Int {
        var keys = 0
        for sql in catchUp.collectKeys(upTo: upto) {
            let affected = try connection.execute(sql).affectedRows
            if keys == 0 { keys = affected }
        }
        if underGuard { keys += try catchUp.wholeKeys.reduce(0) { $0 + (try execute($1)) } }
        guard keys > 0 else { return 0 }
        let source = migrator.model.version(named: step.from ?? "")!
        let destination = migrator.model.version(named: step.to)!
        for part in underGuard ? catchUp.guardedRound : catchUp.round {
            switch part {
            case .statement(let statement):
                _ = try execute(statement)
            case .stream(let stream):
                try streamAgain(stream, source: source, destination: destination)
            case .createRelationships(let entityMapping, let sourceKeys):
                try relateAgain(entityMapping, sourceKeys: sourceKeys, source: source, destination: destination)
            }
        }
        return keys
    }

    /// The last checkpoint holds the staging rows as the round left them.
    func recountLastCheckpoint(_ tracking: ChangeTracking) throws -> [String: Int] {
        let rows = try stagingRows(tracking)
        try checkpoints.recountLast(rows, on: connection)
        return rows
    }

    /// Under the write guard, in the swap's transaction: the last round (with the entity
    /// mappings run again whole, `WholeMappingRerun`), the key sequences
    /// after the rows written meanwhile, then stage 3 (what the build before the guard left).
    func finishOnline(_ catchUp: OnlineCatchUp, validate: PlannedPass?) throws {
        let (_, upto) = try pendingWrites(catchUp)
        try roundWithoutForeignKeys { try runRound(catchUp, upTo: upto, underGuard: true) }
        for statement in catchUp.keySequences { _ = try execute(statement) }
        if let views = work.newVersionViews { try HeavyweightExpansion(run: self, views: views).complete() }
        if let pass = try validate.map(validatePass) {
            let source = migrator.model.version(named: step.from ?? "")!
            let destination = migrator.model.version(named: step.to)!
            _ = try runPass(pass, source: source, destination: destination)
        }
    }
}

/// Stage 3 of `apply --online` split around the write guard (`OnlineStageThree`,
/// docs/online-migrations.md): the indexes and foreign keys are built before the guard, so
/// that writes wait only for the last round and the checks of the rows it wrote.
extension HeavyweightRun {
    /// Whether the build has committed (this run's or an interrupted one's).
    func isStageThreeBuilt() throws -> Bool {
        guard let stageThree = work.stageThree else { return false }
        return try connection.execute(stageThree.isBuilt).bool(0, "present") == true
    }

    /// Build attempts before stage 3 is left whole to the guard.
    static let buildAttempts = 3

    /// `OnlineStageThree.build` in one transaction, after `mapPending`. A row breaking a
    /// constraint may be a write the round has not mapped yet (it read the old store after
    /// the log): the build is tried again after another round, `buildAttempts` times in all.
    /// Returns false, with nothing built, when every attempt failed so (stage 3 then runs
    /// whole under the guard, failing there as offline when the rows are wrong), or when the
    /// role may not set `session_replication_role`, which the rounds after the build need.
    func buildStageThree(after mapPending: () throws -> Void) throws -> Bool {
        guard let stageThree = work.stageThree else { return false }
        for _ in 1...Self.buildAttempts {
            try mapPending()
            do {
                try options.executionPolicy.transaction(on: connection) {
                    // First: it fails at once for a role without the right to set it.
                    _ = try connection.execute(OnlineStageThree.withoutForeignKeys)
                    for statement in stageThree.build { _ = try execute(statement) }
                }
                return true
            } catch let error as PostgresError where error.sqlState == .insufficientPrivilege {
                return false
            } catch let failure as PassFailure where (failure.underlying as? PostgresError)?.sqlState?.errorClass == "23" {
                continue
            }
        }
        return false
    }

    /// In a round's transaction once built: the foreign keys neither check the rows the round
    /// makes again nor act on those it deletes (`OnlineStageThree.guarded` checks them).
    func roundWithoutForeignKeys(_ body: () throws -> Void) throws {
        let built = try isStageThreeBuilt()
        if built { _ = try connection.execute(OnlineStageThree.withoutForeignKeys) }
        try body()
        if built { _ = try connection.execute(OnlineStageThree.withForeignKeys) }
    }

    /// The validate pass as this staging schema needs it: once the build is there (a run
    /// interrupted after it), only what `OnlineStageThree.guarded` leaves.
    func validatePass(_ pass: PlannedPass) throws -> PlannedPass {
        guard pass.stage == .validate, let stageThree = work.stageThree, try isStageThreeBuilt() else { return pass }
        var guarded = pass
        guarded.statements = stageThree.guarded
        return guarded
    }
}

/// Entity mappings run again whole under the write guard of `apply --online`
/// (`WholeMappingRerun` in planning): the catch-up rounds before the guard leave their rows as
/// the bulk pass made them, so only an online run can finish a staging schema they have run in.
extension HeavyweightRun {
    /// Continuing without `--online` a staging schema in which catch-up rounds ran while an
    /// entity mapping waits to run again whole: stops, nothing changed.
    func requireNoMappingLeftToRunWhole() throws {
        guard !isOnline, let catchUp = work.catchUp, !catchUp.rerunWhole.isEmpty, try hasRowLog(catchUp) else { return }
        let position = try connection.execute("SELECT max(mapped_through) AS position FROM \(ident: staging, OnlineCatchUp.positionTable)")
        guard (position.int(0, "position") ?? 0) > 0 else { return }
        let names = catchUp.rerunWhole.joined(separator: ", ")
        throw StagingMismatch(
            staging: staging,
            reason: "holds catch-up rounds of an online run, which leave \(names) to run again whole through its policy under the write guard; continue it with apply --online"
        )
    }
}
