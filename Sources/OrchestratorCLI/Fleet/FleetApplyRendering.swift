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

    static func print(_ outcomes: [FleetOutcome], run: String, format: OutputFormat) {
        let counts = FleetOutcome.Kind.allCases.map { kind in (kind.rawValue, outcomes.filter { $0.kind == kind }.count) }
        switch format {
        case .json:
            printLine(JSONValue.object([
                ("event", .string("summary")),
                ("run", .string(run)),
                ("stores", .array(outcomes.map { json($0) })),
                ("summary", .object([("stores", .number(outcomes.count))] + counts.map { ($0.0, JSONValue.number($0.1)) })),
            ]).rendered)
        case .text:
            table(outcomes).forEach { printLine($0) }
            let parts = counts.filter { $0.1 > 0 }.map { "\($0.1) \($0.0)" }
            printLine("run \(run): \(outcomes.count) store\(outcomes.count == 1 ? "" : "s"): \(parts.isEmpty ? "none" : parts.joined(separator: ", "))")
        }
    }

    /// server, store, from, to, outcome, duration, error: columns padded to their widest cell.
    static func table(_ outcomes: [FleetOutcome]) -> [String] {
        let header = ["SERVER", "STORE", "FROM", "TO", "OUTCOME", "DURATION", "ERROR"]
        let rows = outcomes.map { outcome in
            [
                outcome.store.server, outcome.store.store, outcome.from ?? "-", outcome.to ?? "-", outcome.kind.rawValue,
                outcome.durationMilliseconds.map { "\($0) ms" } ?? "-", outcome.error ?? "",
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { cells in
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
    }
}
