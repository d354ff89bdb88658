import Foundation
import PostgresClient

extension FleetRun {
    /// One thread: its own journal session, claiming stores until every wave is done. The
    /// session ends a claim whose worker stopped answering (`claimTimeout`); while a store
    /// migrates, a heartbeat keeps the claim's transaction busy.
    func work(waves: [String]) throws {
        let journal = FleetJournal(connection: try connections.connect(fleet.journalURL), run: run)
        defer { journal.connection.close() }
        try journal.endIdleClaims(afterSeconds: fleet.claimTimeout)
        for (wave, name) in waves.enumerated() {
            var waiting = WaveWait(limit: TimeInterval(fleet.waveWait))
            while !shouldStop() {
                guard let claim = try journal.claim(wave: wave, perServer: fleet.perServerJobs) else {
                    let left = try journal.unfinishedStores(wave: wave)
                    if left.count == 0 { break }
                    let holding = lock.withLock { !held.isEmpty }
                    try waiting.check(
                        count: left.count, first: left.first, holding: holding, wave: name, run: run,
                        notify: { notice in if lock.withLock({ reportedWaits.insert(wave).inserted }) { onNotice(notice) } }
                    )
                    Thread.sleep(forTimeInterval: 0.05)
                    continue
                }
                lock.withLock { _ = held.insert(claim.store) }
                let heartbeat = ClaimHeartbeat(connection: journal.connection, every: Double(fleet.claimTimeout) / 4)
                let outcome = migrate(claim)
                heartbeat.stop()
                lock.withLock { _ = held.remove(claim.store) }
                do {
                    try journal.finish(outcome, worker: worker)
                } catch {
                    throw ClaimLost(store: claim.store, claimTimeout: fleet.claimTimeout, run: run, underlying: error)
                }
                onOutcome(outcome)
            }
            if shouldStop() { return }
            let failures = try journal.failureCount(wave: wave)
            if failures >= fleet.stopAfterFailures, wave + 1 < waves.count {
                try journal.skipWaves(after: wave, reason: "\(failures) store\(failures == 1 ? "" : "s") failed in an earlier wave (stopAfterFailures: \(fleet.stopAfterFailures))")
                return
            }
        }
    }
}

/// A worker's wait for the stores of a wave other workers hold: reported when it starts, and
/// given up, naming them, after `limit` seconds in which none of them finished.
struct WaveWait {
    var limit: TimeInterval
    private var since: Date?
    private var left = Int.max
    private var reported = false

    init(limit: TimeInterval) {
        self.limit = limit
    }

    /// `count` stores of the wave are left (`first` of them named). While this process holds
    /// stores itself, it waits for its own (each bounded by its steps' bounds), not for others.
    mutating func check(count: Int, first: [FleetStore], holding: Bool, wave: String, run: String, notify: (String) -> Void) throws {
        if count < left || holding {
            since = holding ? nil : Date()
            left = count
        }
        guard !holding else { return }
        if since == nil { since = Date() }
        if !reported {
            reported = true
            notify("waiting for \(Self.describe(first, count: count)) of wave '\(wave)', claimed by other workers (at most \(Int(limit)) s without one finishing: waveWait)")
        }
        if let since, Date().timeIntervalSince(since) >= limit {
            throw FleetWaitExpired(wave: wave, stores: first, count: count, waitedSeconds: Int(limit), run: run)
        }
    }

    static func describe(_ stores: [FleetStore], count: Int) -> String {
        let named = stores.prefix(5).map(\.description).joined(separator: ", ")
        let more = count > min(5, stores.count) ? " and \(count - min(5, stores.count)) more" : ""
        return "\(count) store\(count == 1 ? "" : "s") (\(named)\(more))"
    }
}

/// `waveWait` ran out: other workers' claims held stores of a wave and none finished.
public struct FleetWaitExpired: Error, CustomStringConvertible {
    public var wave: String
    public var stores: [FleetStore]
    public var count: Int
    public var waitedSeconds: Int
    public var run: String

    public var description: String {
        "gave up after waiting \(waitedSeconds) s (waveWait) for \(WaveWait.describe(stores, count: count)) of wave '\(wave)', claimed by other workers that are still alive "
            + "(a worker that stops answering loses its claims after claimTimeout); rerun with --run \(run)"
    }
}

/// The journal session ended while it held a claim (the server ended it after claimTimeout,
/// or it was cut off): the outcome could not be recorded, and the store is free to claim again.
public struct ClaimLost: Error, CustomStringConvertible {
    public var store: FleetStore
    public var claimTimeout: Int
    public var run: String
    public var underlying: Error

    public var description: String {
        "the journal session holding \(store)'s claim ended before its outcome was recorded (claimTimeout \(claimTimeout) s, or the journal server was lost): "
            + "\(underlying); the store is claimed again by the next worker; rerun with --run \(run)"
    }
}

/// Keeps a claim's journal session busy while its store migrates: a `SELECT 1` every
/// `interval` in the claim's transaction, so that `idle_in_transaction_session_timeout` ends
/// only the sessions of workers that stopped (a frozen process's heartbeat stops with it).
final class ClaimHeartbeat: @unchecked Sendable {
    private let condition = NSCondition()
    private var stopped = false
    private var ended = false

    init(connection: PostgresConnection, every interval: TimeInterval) {
        let thread = Thread { [self] in
            condition.lock()
            while !stopped {
                if !condition.wait(until: Date().addingTimeInterval(interval)), !stopped {
                    condition.unlock()
                    let alive = (try? connection.execute("SELECT 1")) != nil
                    condition.lock()
                    if !alive { break }
                }
            }
            ended = true
            condition.broadcast()
            condition.unlock()
        }
        thread.name = "orchestrator-claim-heartbeat"
        thread.start()
    }

    /// Stops the heartbeat and waits for its last statement: the session is the worker's again.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while !ended { condition.wait() }
        condition.unlock()
    }
}
