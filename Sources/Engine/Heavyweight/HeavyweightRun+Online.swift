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

    var isOnline: Bool { options.online }

    /// The step's catch-up plan: `OnlineNotSupported.check` refused the plan before any step
    /// ran when a heavyweight step has none.
    func onlinePlan() -> OnlineCatchUp {
        guard let catchUp = step.onlineCatchUp else { preconditionFailure("apply --online refuses heavyweight steps without a catch-up plan") }
        return catchUp
    }

    /// Whether the staging schema holds the row change log (the run that made it was online).
    func hasRowLog(_ catchUp: OnlineCatchUp?) throws -> Bool {
        guard let catchUp else { return false }
        return try connection.execute(catchUp.isInstalled).bool(0, "present") == true
    }

    /// Rounds while more than `options.catchUpRemainder` writes are logged after the last one, at most
    /// `maximumRounds`; each commits with the position it reached and the staging rows counted
    /// into the last checkpoint, so a resumed run continues from there. Returns that
    /// checkpoint as the last round left it.
    func catchUp(_ catchUp: OnlineCatchUp, after last: Checkpoint?, _ tracking: ChangeTracking, onRound: (Int, Int) -> Void) throws -> Checkpoint? {
        var last = last
        for round in 1...Self.maximumRounds {
            let (pending, upto) = try pendingWrites(catchUp)
            guard pending > options.catchUpRemainder else { break }
            let rows = try options.executionPolicy.transaction(on: connection) {
                try runRound(catchUp, upTo: upto)
                return try recountLastCheckpoint(tracking)
            }
            last?.tableRows = rows
            onRound(round, pending)
        }
        return last
    }

    /// Writes logged after the last round, and the last one's id.
    func pendingWrites(_ catchUp: OnlineCatchUp) throws -> (pending: Int, upto: Int) {
        let result = try connection.execute(catchUp.pending)
        return (Int(result.int(0, "pending") ?? 0), Int(result.int(0, "upto") ?? 0))
    }

    /// One round in the caller's transaction: the keys logged up to `upto`, then the round's
    /// statements and streamed entity mappings restricted to them. Returns the keys' count.
    @discardableResult
    func runRound(_ catchUp: OnlineCatchUp, upTo upto: Int) throws -> Int {
        var keys = 0
        for sql in catchUp.collectKeys(upTo: upto) {
            let affected = try connection.execute(sql).affectedRows
            if keys == 0 { keys = affected }
        }
        guard keys > 0 else { return 0 }
        let source = migrator.model.version(named: step.from ?? "")!
        let destination = migrator.model.version(named: step.to)!
        for part in catchUp.round {
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
        let counts = JSONValue.object(rows.keys.sorted().map { ($0, .number(rows[$0]!)) }).rendered
        _ = try connection.execute("""
            UPDATE \(ident: staging, HeavyweightMigration.checkpointTable) SET table_rows = \(counts)::jsonb
            WHERE pass = (SELECT max(pass) FROM \(ident: staging, HeavyweightMigration.checkpointTable))
            """)
        return rows
    }

    /// Under the write guard, in the swap's transaction: the last round, the key sequences
    /// after the rows written meanwhile, then stage 3.
    func finishOnline(_ catchUp: OnlineCatchUp, validate: (Int, PlannedPass)?) throws {
        let (_, upto) = try pendingWrites(catchUp)
        try runRound(catchUp, upTo: upto)
        for statement in catchUp.keySequences { _ = try execute(statement) }
        if let (number, pass) = validate {
            let source = migrator.model.version(named: step.from ?? "")!
            let destination = migrator.model.version(named: step.to)!
            _ = try runPass(pass, number: number, source: source, destination: destination, passStarted: Date())
        }
    }
}
