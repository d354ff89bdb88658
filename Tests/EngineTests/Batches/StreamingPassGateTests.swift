import Foundation
import Testing
import PostgresClient
import TestSupport
@testable import Engine

/// Issue 21 item 3 and issue 24 item 4: a streaming pass asks the run's hooks between its FETCH
/// batches, not only after it commits. A pause waits with the pass open, a stop or a wait past
/// its timeout rolls the pass back, and the next `apply` finishes from the last checkpoint.
@Suite(integration) struct StreamingPassGateTests {
    typealias S = MigratedStore
    typealias Kitchen = HeavyweightMigrationTests

    static let rows = 200
    static let batch = 20

    /// The kitchen's heavyweight step, every stage 1 pass streamed (`forceStreaming`).
    static func migrator(on connection: PostgresConnection) throws -> StoreMigrator {
        var migrator = Kitchen.migrator(try Kitchen.kitchen(), Kitchen.kitchenMapping(), on: connection)
        migrator.forceStreaming = true
        return migrator
    }

    static func options(online: Bool, pauseTimeoutSeconds: Double = ApplyOptions.defaultPauseTimeoutSeconds) -> ApplyOptions {
        var options = ApplyOptions(batchSize: batch, online: online, jobs: 1)
        options.pauseTimeoutSeconds = pauseTimeoutSeconds
        return options
    }

    /// The migrated rows (`OnlineHeavyweightTests.snapshot`) the same step gives offline,
    /// without any hook, from the same rows.
    static func offlineTwin() throws -> [[String?]] {
        var twin: [[String?]] = []
        try S.withStore(try Kitchen.kitchen(), rows: rows) { connection in
            _ = try Kitchen.migrator(try Kitchen.kitchen(), Kitchen.kitchenMapping(), on: connection).apply(options: ApplyOptions(jobs: 1))
            twin = try migrated(on: connection)
        }
        return twin
    }

    static func migrated(on connection: PostgresConnection) throws -> [[String?]] {
        try OnlineHeavyweightTests.snapshot(S.store, on: connection)
    }

    static func stagedChefs(on connection: PostgresConnection) throws -> Int64? {
        try connection.execute(#"SELECT count(*) AS n FROM "shop~staging".chef"#).int(0, "n")
    }

    /// The live store's chefs and recipes, every column.
    static func liveRows(on connection: PostgresConnection) throws -> [[String?]] {
        try connection.execute("SELECT row_to_json(c)::text FROM shop.chef AS c ORDER BY _pk").rows
            + connection.execute("SELECT row_to_json(r)::text FROM shop.recipe AS r ORDER BY _pk").rows
    }

    /// A run (`online` or not) that `hook` stops inside the chefs' streaming pass, after
    /// `pauseTimeoutSeconds` when it pauses: the error says `stopped` and that the pass rolled
    /// back; nothing of the pass is left, the live store is as it was; the next `apply`
    /// resumes after the prepare pass and gives the offline twin's rows. Returns the first
    /// run's progress events.
    @discardableResult
    static func expectStoppedMidPassThenFinished(
        online: Bool, hook: InsidePass, pauseTimeoutSeconds: Double = ApplyOptions.defaultPauseTimeoutSeconds, stopped: String
    ) throws -> [ProgressEvent] {
        let twin = try offlineTwin()
        var events: [ProgressEvent] = []
        try S.withStore(try Kitchen.kitchen(), rows: rows) { connection in
            let before = try liveRows(on: connection)
            let migrator = try migrator(on: connection)
            var options = options(online: online, pauseTimeoutSeconds: pauseTimeoutSeconds)
            options.betweenBatches = [hook]
            let failure = try #require(throws: StepFailure.self) { try migrator.apply(options: options, onProgress: { events.append($0) }) }
            #expect(failure.description.contains("stopped inside a streaming pass: \(stopped)"), "\(failure)")
            #expect(failure.description.contains("the pass was rolled back"), "\(failure)")
            #expect(try stagedChefs(on: connection) == 0, "the chefs' pass left rows")
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try liveRows(on: connection) == before)

            var resumed: [ProgressEvent] = []
            _ = try migrator.apply(options: Self.options(online: online), onProgress: { resumed.append($0) })
            #expect(resumed.filter { $0.kind == .passFinished && $0.resumed }.map(\.pass) == [1])
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try migrated(on: connection) == twin)
        }
        return events
    }

    @Test func aStreamingPassPausedByControlMidPassWaitsThenFinishesWithEveryRowOnResume() throws {
        let twin = try Self.offlineTwin()
        try S.withStore(try Kitchen.kitchen(), rows: Self.rows) { connection in
            let hold = HoldOnce(atRows: 2 * Self.batch)
            var options = Self.options(online: true)
            options.betweenBatches = [hold]
            let run = try BackgroundApply(try Self.migrator(on: connection), options: options, from: connection)
            defer { run.end(on: connection) }
            // The run is inside the chefs' pass, after its second FETCH: pause the store, let it go on.
            #expect(hold.reached.wait(timeout: .now() + 120) == .success, "the hooks were never asked inside a streaming pass")
            try StoreControls.set(store: S.store, paused: true, on: connection)
            hold.release.signal()
            #expect(run.waitForEvent { $0.kind == .paused }, "the run never paused")
            let paused = try #require(run.events.first { $0.kind == .paused })
            #expect(paused.stage == .pass(.createInstances) && paused.entityMapping == "ChefToChef", "\(paused)")
            #expect(paused.reason?.hasPrefix(StoreControls.pausedReason) == true, "\(paused)")
            // It waits inside the pass: still running, the pass not committed, the store not migrated.
            Thread.sleep(forTimeInterval: 1.5)
            #expect(!run.hasEnded)
            #expect(!run.events.contains { $0.kind == .passFinished && $0.entityMapping == "ChefToChef" && $0.stage == .pass(.createInstances) })
            #expect(try S.version(on: connection) == "Kitchen 1")
            // status sees the pause at once, though the run's session is inside the pass's transaction.
            let running = try #require(try RunningMigration.read(store: S.store, on: connection))
            #expect(running.state == .paused && running.phase?.hasSuffix("ChefToChef") == true, "\(running)")
            #expect(running.reason?.hasPrefix(StoreControls.pausedReason) == true && running.rowsDone >= 3 * Self.batch, "\(running)")

            try StoreControls.set(store: S.store, paused: false, on: connection)
            let result = try #require(run.result())
            _ = try result.get()
            let chefRows = run.events.filter { $0.kind == .rows && $0.entityMapping == "ChefToChef" }.map(\.rowsDone)
            #expect(chefRows.first == Self.batch && chefRows.last == Self.rows, "\(chefRows)")
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try Self.migrated(on: connection) == twin)
        }
    }

    @Test func aStopMidPassRollsThePassBackAndTheNextApplyFinishes() throws {
        try Self.expectStoppedMidPassThenFinished(
            online: false, hook: InsidePass(after: 2 * Self.batch, decision: .stop(reason: "stopped by the test")), stopped: "stopped by the test"
        )
    }

    @Test func aThrottleWaitPastItsTimeoutMidPassStopsResumablyAndTheNextApplyFinishes() throws {
        let started = Date()
        let events = try Self.expectStoppedMidPassThenFinished(
            online: true, hook: InsidePass(after: 2 * Self.batch, decision: .pause(reason: "throttled: standby s1 replay lag 40.0 s")),
            pauseTimeoutSeconds: 1, stopped: "throttled: standby s1 replay lag 40.0 s for longer than --pause-timeout (1 s)"
        )
        #expect(Date().timeIntervalSince(started) >= 0.9)
        let paused = events.filter { $0.kind == .paused }
        #expect(paused.count == 1 && paused.first?.entityMapping == "ChefToChef", "\(paused)")
    }
}

/// Answers `decision` inside a streaming pass once `after` of its rows are done, `proceed` elsewhere.
struct InsidePass: BetweenBatches {
    var after: Int
    var decision: BatchDecision

    func decide(at position: BatchPosition, on connection: PostgresConnection) throws -> BatchDecision {
        position.isInsidePass && position.rowsDone >= after ? decision : .proceed
    }
}

/// Inside a streaming pass, once `atRows` of its rows are done: signals `reached`, then waits
/// for `release` (once), so that a test acts while the run is mid-pass.
final class HoldOnce: BetweenBatches, @unchecked Sendable {
    let atRows: Int
    let reached = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var held = false

    init(atRows: Int) {
        self.atRows = atRows
    }

    func decide(at position: BatchPosition, on connection: PostgresConnection) throws -> BatchDecision {
        guard position.isInsidePass, position.rowsDone >= atRows else { return .proceed }
        let first = lock.withLock { () -> Bool in
            defer { held = true }
            return !held
        }
        guard first else { return .proceed }
        reached.signal()
        _ = release.wait(timeout: .now() + 120)
        return .proceed
    }
}
