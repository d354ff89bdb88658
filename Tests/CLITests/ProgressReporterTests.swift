import Engine
import Foundation
@testable import OrchestratorCLI
import Testing

/// Events replayed through the reporter into strings, with a given clock: what each mode
/// writes, where, and what the throttle holds back.
@Suite("progress reporter")
struct ProgressReporterTests {
    typealias Rendered = ProgressRenderingTests

    /// What a reporter wrote to each stream.
    final class Streams {
        var standardOutput = ""
        var standardError = ""
        var now = 0.0
    }

    /// The reporter of `mode`, writing into `streams` and reading its clock.
    static func reporter(_ mode: ProgressReporter.Mode, into streams: Streams) -> ProgressReporter {
        ProgressReporter(
            mode: mode, clock: { streams.now },
            standardOutput: { streams.standardOutput += $0 }, standardError: { streams.standardError += $0 }
        )
    }

    /// A pass of step 1 at the clock times given: started at 0, rows at 0.1, 0.3 and 1.2, done at 1.5,
    /// then the step done at 1.6.
    static let pass: [(ProgressEvent, at: Double)] = [
        (Rendered.event(.passStarted, rowsDone: 0, elapsedSeconds: 0), 0),
        (Rendered.event(.rows, rowsDone: 10_000, elapsedSeconds: 0.1), 0.1),
        (Rendered.event(.rows, rowsDone: 300_000, elapsedSeconds: 0.3), 0.3),
        (Rendered.event(.rows, rowsDone: 900_000, elapsedSeconds: 1.2), 1.2),
        (Rendered.event(.passFinished, rowsDone: 1_000_000, elapsedSeconds: 1.5), 1.5),
        (Rendered.event(.stepFinished, rowsDone: 1_000_000, elapsedSeconds: 1.6), 1.6),
    ]

    static func replay(_ mode: ProgressReporter.Mode, _ events: [(ProgressEvent, at: Double)]) -> Streams {
        let streams = Streams()
        let reporter = reporter(mode, into: streams)
        for (event, time) in events {
            streams.now = time
            reporter.report(event)
        }
        return streams
    }

    @Test("on a terminal the bar is redrawn in place on stderr, ends its line when the pass is done, and step lines go to stdout")
    func barRedrawsInPlace() {
        let streams = Self.replay(.bar, Self.pass)
        let bars = [0, 2, 3, 4].map { "\r" + ProgressRendering.bar(Self.pass[$0].0)! + "\u{1B}[K" }
        #expect(streams.standardError == bars.joined() + "\n", "rows at 0.1 s is held back (bars redraw at most every 0.2 s)")
        #expect(streams.standardOutput == ProgressRendering.line(Self.pass[5].0)! + "\n")
    }

    @Test("a bar left open by a failure mid-pass is ended once by finish, so the error starts on its own line")
    func finishEndsAnOpenBar() {
        let streams = Streams()
        let reporter = Self.reporter(.bar, into: streams)
        reporter.report(Self.pass[0].0)
        #expect(!streams.standardError.hasSuffix("\n"))
        reporter.finish()
        reporter.finish()
        #expect(streams.standardError == "\r" + ProgressRendering.bar(Self.pass[0].0)! + "\u{1B}[K\n")
        #expect(streams.standardOutput.isEmpty)
    }

    @Test("without a terminal plain lines go to stdout, rows at most once a second per pass, stderr untouched")
    func plainLinesOnStandardOutput() {
        let streams = Self.replay(.lines, Self.pass)
        let expected = [0, 3, 4, 5].map { ProgressRendering.line(Self.pass[$0].0)! + "\n" }
        #expect(streams.standardOutput == expected.joined())
        #expect(streams.standardError.isEmpty)
    }

    @Test("json lines: one object per event on stdout, rows throttled like plain lines, started and finished always")
    func jsonLinesOnStandardOutput() throws {
        var stepStarted = Self.pass[0].0
        stepStarted.kind = .stepStarted
        let streams = Self.replay(.jsonLines, [(stepStarted, 0)] + Self.pass)
        #expect(streams.standardError.isEmpty)
        #expect(streams.standardOutput.hasSuffix("\n"))
        let objects = try streams.standardOutput.split(separator: "\n").map { try jsonObject(String($0)) }
        #expect(objects.map { $0["event"] as? String } == ["stepStarted", "passStarted", "rows", "passFinished", "stepFinished"])
        #expect(objects[2]["rowsDone"] as? Int == 900_000)
    }

    @Test("rows events pass at most once per interval per pass; every other event always passes")
    func throttle() {
        func event(_ kind: ProgressEvent.Kind, pass: Int) -> ProgressEvent {
            var event = Rendered.rows
            event.kind = kind
            event.pass = pass
            return event
        }
        let timeline: [(ProgressEvent, at: Double, admitted: Bool)] = [
            (event(.passStarted, pass: 3), 100, true),
            (event(.rows, pass: 3), 100.5, false),  // within a second of the pass's start
            (event(.rows, pass: 3), 101, true),
            (event(.rows, pass: 3), 101.9, false),
            (event(.rows, pass: 3), 102.1, true),
            (event(.passFinished, pass: 3), 102.2, true),
            (event(.passStarted, pass: 4), 102.3, true),
            (event(.rows, pass: 4), 102.4, false),  // the next pass counts from its own start
            (event(.rows, pass: 5), 102.5, true),  // another pass is not held back by this one
            (event(.stepFinished, pass: 5), 102.5, true),
            (event(.stepStarted, pass: 1), 102.5, true),
        ]
        var throttle = ProgressThrottle(interval: 1)
        let admitted = timeline.map { throttle.admits($0.0, at: $0.at) }
        #expect(admitted == timeline.map(\.admitted))
    }

    @Test("json format writes JSON lines; text a bar when stderr is a terminal, plain lines otherwise")
    func modeFollowsFormatAndTerminal() {
        #expect(ProgressReporter.Mode(format: .json, stderrIsTerminal: true) == .jsonLines)
        #expect(ProgressReporter.Mode(format: .json, stderrIsTerminal: false) == .jsonLines)
        #expect(ProgressReporter.Mode(format: .text, stderrIsTerminal: true) == .bar)
        #expect(ProgressReporter.Mode(format: .text, stderrIsTerminal: false) == .lines)
    }
}
