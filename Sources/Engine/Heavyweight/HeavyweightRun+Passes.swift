import Foundation
import JSONRendering
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// What a resumed heavyweight step checks before trusting the passes an earlier run left:
/// writes to the old store logged by the change triggers, and the staging tables' rows.
extension HeavyweightRun {
    func schemaExists(_ schema: String) throws -> Bool {
        !(try connection.execute("SELECT 1 FROM pg_namespace WHERE nspname = \(schema)")).isEmpty
    }

    /// `ChangeTracking.install` in one transaction, once the schema in the staging schema's
    /// place (an earlier run's, dropped first) has proven to be this store's own.
    /// Online, the row change log and its triggers too (`OnlineCatchUp.install`).
    func installTracking(_ tracking: ChangeTracking, _ catchUp: OnlineCatchUp?) throws {
        try options.executionPolicy.transaction(on: connection) {
            try StoreSchemas.requireOwnable(staging, role: .staging, store: migrator.store, on: connection)
            for statement in tracking.install + (catchUp?.install ?? []) { _ = try execute(statement) }
            try checkpoints.installed(on: connection)
            try StoreSchemas.register(staging, role: .staging, store: migrator.store, version: step.to, on: connection)
        }
    }

    /// The checkpoint row of a pass, in its transaction: the last write logged (none can come
    /// while the guard is held) and the rows of every staging table — those the pass wrote
    /// counted again (or known from its INSERT: `rowsFilledAlone`), the others as the previous
    /// checkpoint counted them.
    /// The change log's last entry.
    func changesSeen(_ tracking: ChangeTracking, on session: PostgresConnection? = nil) throws -> Int {
        Int(try (session ?? connection).execute(tracking.lastChange).int(0, "seen") ?? 0)
    }

    /// On `session` when given (`ConcurrentPasses`). `filled`: the rows of the tables the pass
    /// filled alone, known without counting them (`rowsFilledAlone`).
    func recordCheckpoint(
        _ pass: PlannedPass, number: Int, rows: Int, after previous: Checkpoint?, _ tracking: ChangeTracking, on session: PostgresConnection? = nil,
        filled: [String: Int] = [:]
    ) throws -> Checkpoint {
        let connection = session ?? connection
        let seen = try changesSeen(tracking, on: connection)
        let recount = (previous == nil ? tracking.stagingTables : pass.tablesWritten).map { $0.filter { filled[$0] == nil } }
        let counted = try stagingRows(tracking, of: recount, on: connection).merging(filled) { $1 }
        let tableRows = (previous?.tableRows ?? [:]).merging(counted) { $1 }
        let checkpoint = Checkpoint(pass: number, rows: rows, changesSeen: seen, tableRows: tableRows)
        try checkpoints.record(checkpoint, name: pass.name, on: connection)
        return checkpoint
    }

    func stagingRows(_ tracking: ChangeTracking, of tables: [String]? = nil, on session: PostgresConnection? = nil) throws -> [String: Int] {
        if tables?.isEmpty == true { return [:] }
        let result = try (session ?? connection).execute(tracking.countRows(of: tables))
        var rows: [String: Int] = [:]
        for row in result.rows.indices { rows[result.value(row, "name") ?? ""] = Int(result.int(row, "n") ?? 0) }
        return rows
    }

    /// `ResumeDecision.verify` over what the change log and the staging tables hold now.
    func verify(since checkpoint: Checkpoint, _ tracking: ChangeTracking, state: HeavyweightPhases.State) throws {
        let untracked = try connection.execute(tracking.untracked(store: migrator.store)).rows.compactMap { $0[0] }
        let changes = try connection.execute(tracking.changes(after: checkpoint.changesSeen))
        let writes = changes.rows.indices.map { row in
            LoggedWrites(
                table: changes.value(row, "table_name") ?? "", operation: changes.value(row, "operation") ?? "",
                rows: Int(changes.int(row, "rows") ?? 0), truncated: changes.bool(row, "truncated") == true
            )
        }
        let (rows, stagingWrites) = try stagingRows(since: checkpoint, tracking, state: state)
        try ResumeDecision.verify(
            since: checkpoint, store: migrator.store, staging: staging, untracked: untracked, writes: writes, replaysWrites: isOnline,
            stagingTables: tracking.stagingTables, stagingRows: rows
        )
        try ResumeDecision.verifyNoWrites(stagingWrites, since: checkpoint, staging: staging)
    }

    /// Every staging table holds what `checkpoint` left (none was changed by hand).
    func verifyStagingRows(against checkpoint: Checkpoint, _ tracking: ChangeTracking, state: HeavyweightPhases.State) throws {
        let (rows, stagingWrites) = try stagingRows(since: checkpoint, tracking, state: state)
        try ResumeDecision.verifyRows(against: checkpoint, staging: staging, stagingTables: tracking.stagingTables, stagingRows: rows)
        try ResumeDecision.verifyNoWrites(stagingWrites, since: checkpoint, staging: staging)
    }

    /// The staging tables' rows as `checkpoint` counted them when the write log
    /// (`StagingWriteLog`) holds nothing and every table still has its trigger: one read of the
    /// log instead of a scan of every table. Otherwise, and on a staging schema an earlier
    /// release made without the log, they are counted; with the writes logged.
    func stagingRows(since checkpoint: Checkpoint, _ tracking: ChangeTracking, state: HeavyweightPhases.State) throws -> ([String: Int], [StagingWrites]) {
        if state.stagingLogged == nil {
            state.stagingLogged = try connection.execute(StagingWriteLog.isPresent(staging: staging)).bool(0, "logged") == true
        }
        guard state.stagingLogged == true else { return (try stagingRows(tracking), []) }
        let log = try connection.execute(StagingWriteLog.checked(staging: staging, tables: tracking.stagingTables))
        if log.rows.isEmpty { return (checkpoint.tableRows, []) }
        let writes = log.rows.indices.compactMap { row in
            log.value(row, "operation").map { StagingWrites(table: log.value(row, "name") ?? "", operation: $0, statements: Int(log.int(row, "statements") ?? 0)) }
        }
        return (try stagingRows(tracking), writes)
    }
}

/// The streamed parts of a catch-up round (`OnlineCatchUp.CatchUpStep`): stage 1 again for the
/// round's source rows, through the entity mapping's policy when it has one, and a policy's
/// stage 2 hooks again for the rows made from them (`CatchUpPolicies` in planning); the hooks
/// are told the round's source rows (`CatchUpRoundScope`).
extension HeavyweightRun {
    /// Online, what the instance writers record and where kept-key tables take new keys.
    var onlineInstances: OnlineInstances? {
        guard isOnline, let catchUp = work.catchUp else { return nil }
        return OnlineInstances(store: migrator.store, keptKeys: catchUp.keptKeys)
    }

    func streamAgain(_ stream: StreamedMapping, source: ModelVersion, destination: ModelVersion) throws {
        let pass = PlannedPass(stage: .createInstances, entityMapping: stream.entityMapping, execution: .streaming, statements: [], stream: stream)
        let context = try self.context(for: pass, stream: stream, source: source, destination: destination)
        context.catchUpRound = catchUpRound(of: stream.entityMapping)
        let policy = try policyInstance(for: stream.entityMapping)
        _ = try StreamingPass(context: context, policy: policy, sizing: options.streamingSizing) { _ in }.createInstances()
    }

    func relateAgain(_ entityMapping: String, sourceKeys: SQL, source: ModelVersion, destination: ModelVersion) throws {
        let pass = PlannedPass(stage: .createRelationships, part: .toMany, entityMapping: entityMapping, execution: .streaming, statements: [])
        let context = try self.context(for: pass, stream: nil, source: source, destination: destination)
        context.catchUpRound = catchUpRound(of: entityMapping)
        let policy = try policyInstance(for: entityMapping)
        _ = try StreamingPass(context: context, policy: policy, sizing: options.streamingSizing) { _ in }
            .createRelationships(mappingName: entityMapping, sourceKeys: sourceKeys)
    }

    /// What the hooks of `entityMapping` are told in a round: nil when it runs whole there.
    func catchUpRound(of entityMapping: String) -> CatchUpRoundScope? {
        guard let catchUp = work.catchUp, !catchUp.rerunWhole.contains(entityMapping),
              let table = work.passes.first(where: { $0.stage == .createInstances && $0.entityMapping == entityMapping })?.sourceTable else { return nil }
        return CatchUpRoundScope(sourceTable: table, sourceKeys: catchUp.keys(of: table))
    }
}

extension HeavyweightRun {
    /// A set-based stage 1 pass on `session`, in its transaction with its checkpoint. With
    /// `insertedByParts`: a split pass whose INSERT its parts ran and committed, those rows
    /// (`ConcurrentPasses+Split`); the rest of its statements run here.
    func runSetBased(
        _ pass: PlannedPass, number: Int, after previous: Checkpoint?, on session: PostgresConnection, writeGuard: WriteGuard? = nil, insertedByParts: Int? = nil
    ) throws -> Checkpoint {
        try options.executionPolicy.transaction(on: session) {
            var rows = insertedByParts ?? 0
            for statement in insertedByParts == nil ? pass.statements : Array(pass.statements.dropFirst()) {
                let affected = try execute(statement, on: session)
                if Self.countsRows(statement, of: pass) { rows = affected }
            }
            let filled = Self.rowsFilledAlone(by: pass, rows: rows, among: work.passes)
            let checkpoint = try recordCheckpoint(pass, number: number, rows: rows, after: previous, work.changeTracking, on: session, filled: filled)
            try writeGuard?.requireNoWrites(seen: checkpoint.changesSeen)
            return checkpoint
        }
    }

    /// Set-based stage 1 counts the rows of its INSERT of the destination rows: the last
    /// statement taking ROW EXCLUSIVE (after the association's, before the primary key's).
    static func countsRows(_ statement: PlannedStatement, of pass: PlannedPass) -> Bool {
        pass.stage == .createInstances && pass.stream == nil && statement.lock == .rowExclusive
    }

    /// The rows of the one table a set-based stage 1 pass fills when no other pass of stage 1
    /// writes it: those its INSERT added to the table, empty until then (created empty by this
    /// step; a pass not done left nothing, its transaction rolled back). Counting them again
    /// would read the whole table. Empty otherwise: the checkpoint counts.
    static func rowsFilledAlone(by pass: PlannedPass, rows: Int, among passes: [PlannedPass]) -> [String: Int] {
        guard pass.stage == .createInstances, pass.stream == nil, let tables = pass.tablesWritten, tables.count == 1 else { return [:] }
        let others = passes.filter { $0.stage == .createInstances && $0.name != pass.name }
        guard others.allSatisfy({ $0.tablesWritten.map { !$0.contains(tables[0]) } ?? false }) else { return [:] }
        return [tables[0]: rows]
    }

    /// How many sessions a heavyweight step's passes may use at once: `--jobs`, else this
    /// machine's processors, at most 4; one in a rehearsal (a single transaction).
    var jobs: Int {
        connection.isRehearsing ? 1 : max(1, options.jobs ?? min(ProcessInfo.processInfo.activeProcessorCount, ApplyOptions.defaultJobsLimit))
    }
}
