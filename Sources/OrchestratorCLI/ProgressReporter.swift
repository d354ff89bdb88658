import Engine
import Foundation

/// Lets every event through except `rows`, which it lets through at most once per `interval`
/// seconds per pass (counted from the pass's start), so a pass of a million rows reported in
/// batches does not print thousands of lines. The time is given, so tests need no clock.
struct ProgressThrottle {
    var interval: Double
    /// The pass whose last line was let through, and when.
    private var lastShown: (step: Int, pass: Int, at: Double)?

    init(interval: Double) {
        self.interval = interval
    }

    mutating func admits(_ event: ProgressEvent, at now: Double) -> Bool {
        switch event.kind {
        case .passStarted:
            lastShown = (event.step, event.pass, now)
            return true
        case .rows:
            if let last = lastShown, last.step == event.step, last.pass == event.pass, now - last.at < interval {
                return false
            }
            lastShown = (event.step, event.pass, now)
            return true
        case .stepStarted, .passFinished, .stepFinished, .paused:
            return true
        }
    }
}

/// Writes `apply`'s progress as it happens, in one of three modes.
final class ProgressReporter {
    enum Mode: Equatable {
        /// `--format json`: one JSON object per event on stdout, before the final document.
        case jsonLines
        /// Text with stderr on a terminal: a bar on stderr redrawn in place; step lines on stdout.
        case bar
        /// Text otherwise: plain lines on stdout, beside apply's other lines.
        case lines

        init(format: OutputFormat, stderrIsTerminal: Bool = isatty(STDERR_FILENO) != 0) {
            switch format {
            case .json: self = .jsonLines
            case .text: self = stderrIsTerminal ? .bar : .lines
            }
        }
    }

    let mode: Mode
    private var throttle: ProgressThrottle
    private let clock: () -> Double
    private let standardOutput: (String) -> Void
    private let standardError: (String) -> Void
    /// A bar line is on stderr without its newline yet.
    private var isBarOpen = false

    /// The clock and both streams are parameters so tests can replay events into strings.
    init(
        mode: Mode, clock: @escaping () -> Double = { ProcessInfo.processInfo.systemUptime },
        standardOutput: @escaping (String) -> Void = CommandOutput.writeStandardOutput,
        standardError: @escaping (String) -> Void = CommandOutput.writeStandardError
    ) {
        self.mode = mode
        // A redrawn bar may move often; printed lines at most once a second per pass.
        throttle = ProgressThrottle(interval: mode == .bar ? 0.2 : 1)
        self.clock = clock
        self.standardOutput = standardOutput
        self.standardError = standardError
    }

    /// Writes the event at once (FileHandle writes are unbuffered), unless the throttle holds it back.
    func report(_ event: ProgressEvent) {
        guard throttle.admits(event, at: clock()) else { return }
        switch mode {
        case .jsonLines:
            standardOutput(ProgressRendering.json(event).rendered + "\n")
        case .lines:
            if let line = ProgressRendering.line(event) { standardOutput(TerminalText.escaped(line) + "\n") }
        case .bar:
            if let bar = ProgressRendering.bar(event) {
                // Back to the line's start, the bar, then clear what a longer bar left behind.
                standardError("\r" + TerminalText.escaped(bar) + "\u{1B}[K" + (event.kind == .passFinished ? "\n" : ""))
                isBarOpen = event.kind != .passFinished
            } else if let line = ProgressRendering.line(event) {
                finish()
                standardOutput(TerminalText.escaped(line) + "\n")
            }
        }
    }

    /// Ends an open bar line, so what follows (an error, the final lines) starts on its own line.
    func finish() {
        guard isBarOpen else { return }
        standardError("\n")
        isBarOpen = false
    }
}
