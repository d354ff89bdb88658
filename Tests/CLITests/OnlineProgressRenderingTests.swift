import Engine
import Foundation
@testable import OrchestratorCLI
import Testing

/// The progress lines of `apply --online`: a lightweight step's phases by their summary, a
/// heavyweight step's online stages by name.
@Suite("online progress rendering")
struct OnlineProgressRenderingTests {
    static let backfill = ProgressEvent(
        kind: .rows, step: 1, stepCount: 1, stepKind: "lightweight", from: "Bench 1", to: "Bench 2", pass: 3, passCount: 9,
        stage: .online, phase: "backfill recipe.rating", rowsDone: 10_000, elapsedSeconds: 2
    )
    static let prefix = "step 1 of 1: lightweight 'Bench 1' -> 'Bench 2' pass 3 of 9 online: backfill recipe.rating"

    static func event(_ kind: ProgressEvent.Kind, rowsDone: Int = 0, elapsedSeconds: Double = 0, resumed: Bool = false) -> ProgressEvent {
        var event = backfill
        event.kind = kind
        event.rowsDone = rowsDone
        event.elapsedSeconds = elapsedSeconds
        event.resumed = resumed
        return event
    }

    static func heavyweight(_ kind: ProgressEvent.Kind, _ stage: ProgressEvent.Stage, elapsedSeconds: Double = 0) -> ProgressEvent {
        ProgressEvent(
            kind: kind, step: 1, stepCount: 1, stepKind: "heavyweight", from: "Heavy 1", to: "Heavy 2", pass: stage == .install ? 1 : 7,
            passCount: 7, stage: stage, elapsedSeconds: elapsedSeconds
        )
    }

    @Test("a lightweight step's online phase is named by its summary", arguments: [
        (event(.passStarted), "\(prefix): started"),
        (backfill, "\(prefix): 10000 rows, 5000 rows/s, ETA unknown"),
        (event(.passFinished, rowsDone: 40_000, elapsedSeconds: 8), "\(prefix): done, 40000 rows in 8.0 s (5000 rows/s)"),
        (event(.passFinished, resumed: true), "\(prefix): done by an earlier run (resumed)"),
    ])
    func lightweightPhaseLines(event: ProgressEvent, expected: String) {
        #expect(ProgressRendering.line(event) == expected)
    }

    @Test("a run paused between batches says why: a line of its own, and a JSON event with the reason last")
    func pausedEvent() throws {
        var paused = Self.event(.paused, rowsDone: 5000)
        paused.reason = "paused by orchestrator control (by alice at 2026-11-28T01:00:00Z; orchestrator control resume --store recipes lets it go on)"
        #expect(ProgressRendering.line(paused) == "\(Self.prefix): \(paused.reason!)")
        #expect(ProgressRendering.bar(paused) == nil, "a bar would hide it: the reporter prints the line")
        let json = ProgressRendering.json(paused).rendered
        #expect(json.hasPrefix(#"{"event":"paused","#), "\(json)")
        #expect(json.hasSuffix(#","reason":"paused by orchestrator control (by alice at 2026-11-28T01:00:00Z; orchestrator control resume --store recipes lets it go on)"}"#), "\(json)")
        #expect(!ProgressRendering.json(Self.backfill).rendered.contains("reason"))
    }

    @Test("a heavyweight step's online stages: install, build, write guard", arguments: [
        (heavyweight(.passStarted, .install), "step 1 of 1: heavyweight 'Heavy 1' -> 'Heavy 2' pass 1 of 7 install: started"),
        (heavyweight(.passFinished, .install, elapsedSeconds: 0.012), "step 1 of 1: heavyweight 'Heavy 1' -> 'Heavy 2' pass 1 of 7 install: done, 0 rows in 12 ms"),
        (heavyweight(.passStarted, .build), "step 1 of 1: heavyweight 'Heavy 1' -> 'Heavy 2' pass 7 of 7 build: started"),
        (heavyweight(.passFinished, .build, elapsedSeconds: 4.31), "step 1 of 1: heavyweight 'Heavy 1' -> 'Heavy 2' pass 7 of 7 build: done, 0 rows in 4.3 s"),
        (heavyweight(.passStarted, .writeGuard), "step 1 of 1: heavyweight 'Heavy 1' -> 'Heavy 2' pass 7 of 7 writeGuard: started"),
        (heavyweight(.passFinished, .writeGuard, elapsedSeconds: 0.3), "step 1 of 1: heavyweight 'Heavy 1' -> 'Heavy 2' pass 7 of 7 writeGuard: done, 0 rows in 300 ms"),
    ])
    func heavyweightStageLines(event: ProgressEvent, expected: String) {
        #expect(ProgressRendering.line(event) == expected)
    }

    @Test("the bar of an online phase names it too")
    func barOfAPhase() {
        #expect(ProgressRendering.bar(Self.backfill) == "step 1/1 pass 3/9 online: backfill recipe.rating 10000 rows, 5000 rows/s, ETA unknown")
    }

    @Test("a JSON line of an online phase carries `phase` right after `stage`; other lines have no such key")
    func jsonPhase() throws {
        let rendered = ProgressRendering.json(Self.backfill).rendered
        #expect(rendered.contains(#""stage":"online","phase":"backfill recipe.rating","entityMapping":null"#), "\(rendered)")
        let guardLine = ProgressRendering.json(Self.heavyweight(.passStarted, .writeGuard)).rendered
        #expect(guardLine.contains(#""stage":"writeGuard","entityMapping":null"#), "\(guardLine)")
        #expect(!guardLine.contains("phase"))
    }
}
