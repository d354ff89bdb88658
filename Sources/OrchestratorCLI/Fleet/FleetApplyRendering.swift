import Engine
import Foundation
import JSONRendering

/// `fleet apply`'s progress: a line on stderr at most once a second (text), or one JSON line
/// per store on stdout (`--format json`).
final class FleetProgress: @unchecked Sendable {
    private let lock = NSLock()
    private let format: OutputFormat
    private var total = 0
    private var done = 0
    private var failed = 0
    private let started = Date()
    private var lastShown = Date.distantPast

    init(format: OutputFormat) {
        self.format = format
    }

    func start(total: Int) {
        lock.withLock { self.total = total }
    }

    func record(_ outcome: FleetOutcome) {
        lock.withLock {
            done += 1
            if outcome.kind == .failed || outcome.kind == .unreached { failed += 1 }
            switch format {
            case .json:
                printLine(FleetApplyRendering.json(outcome, event: "store").rendered)
            case .text:
                guard Date().timeIntervalSince(lastShown) >= 1 || done == total else { return }
                lastShown = Date()
                CommandOutput.writeStandardError(line() + "\n")
            }
        }
    }

    /// `fleet: 120/1000 stores, 35.2/s, ETA 25 s, 1 failed`.
    private func line() -> String {
        let elapsed = max(Date().timeIntervalSince(started), 0.001)
        let rate = Double(done) / elapsed
        let eta = rate > 0 ? Int((Double(max(total - done, 0)) / rate).rounded(.up)) : 0
        return "fleet: \(done)/\(total) stores, \(String(format: "%.1f", rate))/s, ETA \(eta) s, \(failed) failed"
    }
}

enum FleetApplyRendering {
    static func json(_ outcome: FleetOutcome, event: String? = nil) -> JSONValue {
        var fields: [(String, JSONValue)] = event.map { [("event", .string($0))] } ?? []
        fields += [
            ("server", .string(outcome.store.server)),
            ("store", .string(outcome.store.store)),
            ("from", outcome.from.map(JSONValue.string) ?? .null),
            ("to", outcome.to.map(JSONValue.string) ?? .null),
            ("outcome", .string(outcome.kind.rawValue)),
            ("durationMs", outcome.durationMilliseconds.map(JSONValue.number) ?? .null),
            ("error", outcome.error.map(JSONValue.string) ?? .null),
        ]
        return .object(fields)
    }

    /// What the final report counted: every store, and those that did not reach the target.
    struct Tally {
        var stores = 0
        var counts: [FleetOutcome.Kind: Int] = [:]
        var missedCount = 0
        /// The first ten stores that did not reach the target.
        var missed: [FleetStore] = []

        mutating func add(_ outcome: FleetOutcome) {
            stores += 1
            counts[outcome.kind, default: 0] += 1
            guard !outcome.isDone else { return }
            missedCount += 1
            if missed.count < 10 { missed.append(outcome.store) }
        }
    }

    /// The run's report: a table (text) or one JSON line, read from the journal in pages
    /// (`FleetRun.forEachOutcome`) and written as it is read, so a run of any size is never
    /// held whole. The text table reads the journal twice: its column widths, then its rows.
    static func print(_ fleetRun: FleetRun, format: OutputFormat) throws -> Tally {
        var tally = Tally()
        switch format {
        case .json:
            var first = true
            write("{\"event\":\"summary\",\"run\":\(JSONValue.string(fleetRun.run).rendered),\"stores\":[")
            try fleetRun.forEachOutcome { outcome in
                tally.add(outcome)
                write((first ? "" : ",") + json(outcome).rendered)
                first = false
            }
            let summary = JSONValue.object([("stores", .number(tally.stores))] + counted(tally).map { ($0.0, JSONValue.number($0.1)) })
            write("],\"summary\":\(summary.rendered)}\n")
        case .text:
            var widths = header.map(\.count)
            try fleetRun.forEachOutcome { outcome in
                widths = zip(widths, cells(outcome)).map { max($0, $1.count) }
            }
            printLine(line(header, widths: widths))
            try fleetRun.forEachOutcome { outcome in
                tally.add(outcome)
                printLine(line(cells(outcome), widths: widths))
            }
            let parts = counted(tally).filter { $0.1 > 0 }.map { "\($0.1) \($0.0)" }
            printLine("run \(fleetRun.run): \(tally.stores) store\(tally.stores == 1 ? "" : "s"): \(parts.isEmpty ? "none" : parts.joined(separator: ", "))")
        }
        return tally
    }

    private static func counted(_ tally: Tally) -> [(String, Int)] {
        FleetOutcome.Kind.allCases.map { ($0.rawValue, tally.counts[$0] ?? 0) }
    }

    /// A part of one line of stdout, escaped as `printLine` escapes a whole line.
    private static func write(_ text: String) {
        CommandOutput.writeStandardOutput(TerminalText.escaped(text))
    }

    /// server, store, from, to, outcome, duration, error: columns padded to their widest cell.
    private static let header = ["SERVER", "STORE", "FROM", "TO", "OUTCOME", "DURATION", "ERROR"]

    private static func cells(_ outcome: FleetOutcome) -> [String] {
        [
            outcome.store.server, outcome.store.store, outcome.from ?? "-", outcome.to ?? "-", outcome.kind.rawValue,
            outcome.durationMilliseconds.map { "\($0) ms" } ?? "-", outcome.error ?? "",
        ]
    }

    private static func line(_ cells: [String], widths: [Int]) -> String {
        cells.enumerated().map { index, cell in
            index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
        }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
    }
}
