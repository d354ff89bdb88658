import Foundation
import PostgresClient

/// Asks the run's hooks between two batches and carries out the answer: returns to go on
/// (after a sleep when slowed), waits while paused (asking again each `pollSeconds`, at most
/// `pauseTimeoutSeconds` in all), and throws `RunStopped` to stop. Inside a streaming pass
/// (`BatchPosition.isInsidePass`) the run record is written on a second session (a write in the
/// pass's transaction would show only at its commit) and a slow sleeps in steps of
/// `pollSeconds` with a statement between, so that `idle_in_transaction_session_timeout` never
/// ends the pass's session.
struct BatchGate {
    var hooks: [any BetweenBatches]
    var connection: PostgresConnection
    var pauseTimeoutSeconds: Double
    var pollSeconds: Double = 1
    /// Told once when a pause starts, with its reason, so that progress can show it.
    var onPause: (String) -> Void = { _ in }
    /// The store's row of `orchestrator.runs`: rows done, and why the run waits.
    var record: RunRecord?

    /// The gate of `options` on `migrator`'s connection: none in a rehearsal, whose one
    /// transaction must not wait.
    init(options: ApplyOptions, store: String, connection: PostgresConnection, onPause: @escaping (String) -> Void = { _ in }) {
        hooks = connection.isRehearsing ? [] : [StoreControls(store: store)] + options.betweenBatches
        self.connection = connection
        pauseTimeoutSeconds = options.pauseTimeoutSeconds
        self.onPause = onPause
        record = connection.isRehearsing ? nil : options.runRecord
    }

    /// The hooks' answer: the most cautious one wins (stop, then pause, then the longest slow).
    func decide(at position: BatchPosition) throws -> BatchDecision {
        var decision = BatchDecision.proceed
        for hook in hooks {
            let answer = try hook.decide(at: position, on: connection)
            switch (answer, decision) {
            case (.stop, _): return answer
            case (.pause, .pause), (.proceed, _): break
            case (.pause, _): decision = answer
            case (.slow(let seconds), .slow(let longest)) where seconds <= longest: break
            case (.slow, .pause): break
            case (.slow, _): decision = answer
            }
        }
        return decision
    }

    /// Between two batches: returns when the run may go on.
    func pass(_ position: BatchPosition) throws {
        var pausedSince: Date?
        record?.isInsideTransaction = position.isInsidePass
        defer { record?.isInsideTransaction = false }
        record?.rows(position.rowsDone)
        func stopped(_ reason: String) -> RunStopped {
            RunStopped(store: position.store, reason: reason, isInsidePass: position.isInsidePass)
        }
        while true {
            switch try decide(at: position) {
            case .proceed:
                record?.waiting(nil)
                return
            case .slow(let seconds):
                record?.waiting(nil)
                try sleep(min(max(0, seconds), pauseTimeoutSeconds), keepingAlive: position.isInsidePass)
                return
            case .stop(let reason):
                throw stopped(reason)
            case .pause(let reason):
                if position.holdsWrites {
                    throw stopped("\(reason) (stopped rather than paused: the run holds the write guard, so the application's writes would wait)")
                }
                let since = pausedSince ?? Date()
                if pausedSince == nil {
                    pausedSince = since
                    record?.waiting(reason)
                    onPause(reason)
                }
                let left = pauseTimeoutSeconds - Date().timeIntervalSince(since)
                guard left > 0 else {
                    throw stopped("\(reason) for longer than --pause-timeout (\(DurationText.text(seconds: pauseTimeoutSeconds)))")
                }
                Thread.sleep(forTimeInterval: min(pollSeconds, left))
            }
        }
    }

    /// Sleeps `seconds`; in a transaction, in steps of `pollSeconds` with a statement after each.
    private func sleep(_ seconds: Double, keepingAlive: Bool) throws {
        guard keepingAlive else { return Thread.sleep(forTimeInterval: seconds) }
        let until = Date().addingTimeInterval(seconds)
        var left = seconds
        while left > 0 {
            Thread.sleep(forTimeInterval: min(pollSeconds, left))
            try connection.execute("SELECT 1")
            left = until.timeIntervalSinceNow
        }
    }
}
