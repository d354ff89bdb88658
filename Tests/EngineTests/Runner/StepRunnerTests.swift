import Foundation
import Testing
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// Issue 21, one runner: `StepRunner`'s bookkeeping around any phase (the heavyweight and
/// lightweight runs' suites prove their events unchanged through it).
@Suite(integration) struct StepRunnerTests {
    /// Answers `stop` from its `stopAt`th question on, and keeps every position it was asked at.
    final class Hook: BetweenBatches, @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [BatchPosition] = []
        let stopAt: Int

        init(stopAt: Int) { self.stopAt = stopAt }

        var positions: [BatchPosition] { lock.withLock { seen } }

        func decide(at position: BatchPosition, on connection: PostgresConnection) throws -> BatchDecision {
            lock.withLock {
                seen.append(position)
                return seen.count >= stopAt ? .stop(reason: "hook says stop") : .proceed
            }
        }
    }

    static func event(_ pass: Int, _ stage: ProgressEvent.Stage) -> ProgressEvent {
        ProgressEvent(kind: .passStarted, step: 1, stepCount: 1, stepKind: "heavyweight", from: "v1", to: "v2", pass: pass, passCount: 6, stage: stage)
    }

    static func runner(_ connection: PostgresConnection, hook: Hook, events: Box) -> StepRunner {
        var options = ApplyOptions()
        options.betweenBatches = [hook]
        return StepRunner(store: "shop", connection: connection, options: options) { events.append($0) }
    }

    final class Box: @unchecked Sendable {
        var events: [ProgressEvent] = []
        var ran: [Int] = []
        func append(_ event: ProgressEvent) { events.append(event) }
        var described: [String] { events.map { "\($0.kind.rawValue) \($0.pass) \($0.stage.name) \($0.rowsDone)\($0.resumed ? " resumed" : "")" } }
    }

    @Test func aResumedPhaseIsReportedDoneASkippedOneNotAtAllAndAnEnclosedPassAroundItsPhase() throws {
        try TestDatabase.withFreshConnection { connection in
            try MetadataSchema.bootstrap(on: connection)
            let box = Box(), hook = Hook(stopAt: .max)
            let phases = [
                RunPhase(kind: .pass(.prepare), event: Self.event(1, .pass(.prepare)), start: { .resumed(rows: 7) }) { _ in box.ran.append(1); return 1 },
                RunPhase(kind: .stageThreeBuild, event: Self.event(2, .build), start: { .skipped }) { _ in box.ran.append(2); return 1 },
                RunPhase(kind: .pass(.createInstances), event: Self.event(3, .pass(.createInstances)), gatedAfter: { true }) { context in
                    box.ran.append(3)
                    context.rows(2)
                    return 3
                },
                RunPhase(kind: .catchUpRounds, event: Self.event(4, .catchUp), reporting: .recorded) { _ in box.ran.append(4); return 0 },
                RunPhase(kind: .swap, event: Self.event(6, .swap), enclosing: Self.event(5, .pass(.validate))) { context in
                    box.ran.append(context.rowsBefore)
                    return 0
                },
            ]
            let rows = try Self.runner(connection, hook: hook, events: box).run(phases)
            #expect(rows == 10)
            // The swap saw the rows of the phases before it, the resumed one's included.
            #expect(box.ran == [3, 4, 10])
            #expect(box.described == [
                "passFinished 1 prepare 7 resumed",
                "passStarted 3 createInstances 0", "rows 3 createInstances 2", "passFinished 3 createInstances 3",
                "passStarted 5 validate 0", "passStarted 6 swap 0", "passFinished 5 validate 0", "passFinished 6 swap 0",
            ])
            // Asked once, after the gated pass: the step's rows so far, the write guard held.
            #expect(hook.positions == [BatchPosition(store: "shop", rowsDone: 10, holdsWrites: true)])
        }
    }

    @Test func aHookStoppingAfterAPhaseStopsTheRunBeforeTheNextWithTheFailingStatementNamedByTheWork() throws {
        try TestDatabase.withFreshConnection { connection in
            try MetadataSchema.bootstrap(on: connection)
            let box = Box(), hook = Hook(stopAt: 1)
            let runner = Self.runner(connection, hook: hook, events: box)
            let statement = PlannedStatement("SELECT 1", lock: .none, summary: "one")
            let phases = [
                RunPhase(kind: .pass(.createInstances), event: Self.event(1, .pass(.createInstances)), gatedAfter: { false }) { context in
                    context.running(statement)
                    return 4
                },
                RunPhase(kind: .swap, event: Self.event(2, .swap)) { _ in box.ran.append(2); return 0 },
            ]
            let stopped = #expect(throws: RunStopped.self) { try runner.run(phases) }
            #expect(stopped?.reason == "hook says stop")
            #expect(box.ran.isEmpty)
            #expect(box.described == ["passStarted 1 createInstances 0", "passFinished 1 createInstances 4"])
            #expect(hook.positions == [BatchPosition(store: "shop", rowsDone: 4, holdsWrites: false)])
            #expect(runner.failure.statement == statement)
        }
    }
}
