import Foundation
import Planning
import PostgresClient
import SQLBuilding

/// `complete` of a heavyweight expansion: the `apply --expand` run waiting before its switch-over
/// is given the proceed and switches over (`HeavyweightExpansion.complete`, in the swap's
/// transaction); nothing is left to run here.
extension ExpansionCompletion {
    /// The longest `complete` waits for the run to switch over once it gave the proceed (the
    /// run looks each second; the switch-over is the last round and the swap, under the
    /// write guard).
    static let switchOverWaitSeconds: Double = 600

    /// 1. Sessions using the new version's views: refused, naming them, unless `force`;
    /// 2. the proceed (`orchestrator control proceed`) for the step the run holds back;
    /// 3. wait, at most `switchOverWaitSeconds`, for the expansion's row to go. A run no longer
    ///    there (the store's lock free) cannot switch over: `NoRunToSwitchOver`, the proceed
    ///    kept for the next `apply --expand`, which continues the step and switches over.
    func completeHeavyweight(_ expansion: ExpansionRecord, force: Bool, started: Date) throws -> CompletionReport {
        let sessions = try Self.sessions(using: expansion.viewsSchema, on: connection)
        if !sessions.isEmpty {
            guard force else { throw OldVersionInUse(store: store, viewsSchema: expansion.viewsSchema, sessions: sessions) }
            try Self.end(sessions, on: connection)
        }
        let step = try StoreControls.proceed(store: store, on: connection)
        let lock = StoreLock(store: store, connection: connection)
        while try ExpansionRecord.read(store: store, on: connection) != nil {
            guard try !connection.advisoryLockHolders(key: lock.key).isEmpty else { throw NoRunToSwitchOver(store: store, step: step) }
            guard Date().timeIntervalSince(started) < Self.switchOverWaitSeconds else {
                throw NoRunToSwitchOver(store: store, step: step, waitedSeconds: Self.switchOverWaitSeconds)
            }
            Thread.sleep(forTimeInterval: StoreLock.pollInterval)
        }
        return CompletionReport(
            store: store, oldVersion: expansion.oldVersion, newVersion: expansion.newVersion, viewsSchema: expansion.viewsSchema,
            statements: ["DROP SCHEMA IF EXISTS \(quoteIdentifier(expansion.viewsSchema)) CASCADE"], endedSessions: sessions,
            durationMilliseconds: milliseconds(since: started), switchedOver: true
        )
    }
}

/// `complete` gave the proceed, but no `apply --expand` run switched over: exit 1.
public struct NoRunToSwitchOver: Error, CustomStringConvertible {
    public var store: String
    public var step: String?
    /// Set when a run was there but did not switch over in time.
    public var waitedSeconds: Double?

    public var description: String {
        let what = step.map { "the switch-over of \($0)" } ?? "the switch-over"
        if let waitedSeconds {
            return "store \(store): proceed given, but the apply --expand run did not finish \(what) within \(Int(waitedSeconds)) s; see its output (orchestrator status --store \(store) shows where it is)"
        }
        return "store \(store): proceed given, but no apply --expand run of it is waiting to switch over (it stopped); run apply --expand again with the same model: it continues the step and switches over at once"
    }
}
