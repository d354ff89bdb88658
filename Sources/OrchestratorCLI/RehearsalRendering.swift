import ArgumentParser
import Engine
import JSONRendering
import ObjectModel
import Planning

/// `apply --dry-run` output: each step's outcome, time, rows and lock waits.
enum RehearsalRendering {
    static func json(_ report: RehearsalReport, store: String) -> JSONValue {
        .object([
            ("store", .string(store)),
            ("dryRun", .bool(true)),
            ("version", .string(report.plan.targetVersion)),
            ("storeVersion", report.plan.storeVersion.map(JSONValue.string) ?? .null),
            ("wasUpToDate", .bool(report.plan.isUpToDate)),
            ("wouldSucceed", .bool(report.wouldSucceed)),
            ("steps", .array(report.steps.map { rehearsed in
                .object([
                    ("kind", .string(rehearsed.step.kind.rawValue)),
                    ("from", rehearsed.step.from.map(JSONValue.string) ?? .null),
                    ("to", .string(rehearsed.step.to)),
                    ("outcome", .string(rehearsed.outcome.rawValue)),
                    ("rows", .number(rehearsed.rows)),
                    ("durationMs", .number(rehearsed.durationMilliseconds)),
                    ("lockWaits", .number(rehearsed.lockWaits)),
                    ("lockWaitMs", .number(rehearsed.lockWaitMilliseconds)),
                    ("failedStatement", rehearsed.failedStatement.map(JSONValue.string) ?? .null),
                    ("error", rehearsed.error.map(JSONValue.string) ?? .null),
                ])
            })),
        ])
    }

    static func text(_ report: RehearsalReport, store: String) -> [String] {
        if report.plan.isUpToDate {
            return ["store \(store): already up to date at '\(report.plan.targetVersion)'; nothing to do"]
        }
        var lines: [String] = []
        for (index, rehearsed) in report.steps.enumerated() {
            let step = rehearsed.step
            var line = "step \(index + 1) of \(report.steps.count): " + ProgressRendering.stepTitle(kind: step.kind.rawValue, from: step.from, to: step.to) + ": "
            switch rehearsed.outcome {
            case .notReached:
                lines.append(line + "not reached")
                continue
            case .wouldSucceed: line += "would succeed"
            case .wouldFail: line += "would fail"
            }
            line += " (\(rehearsed.durationMilliseconds) ms, \(counted(rehearsed.rows, "row")), \(counted(rehearsed.lockWaits, "lock wait"))"
                + (rehearsed.lockWaits > 0 ? " costing \(rehearsed.lockWaitMilliseconds) ms" : "") + ")"
            if let statement = rehearsed.failedStatement { line += " at \"\(statement)\"" }
            if let error = rehearsed.error { line += ": \(error)" }
            lines.append(line)
        }
        if let failed = report.steps.firstIndex(where: { $0.outcome == .wouldFail }) {
            lines.append("store \(store): apply would fail at step \(failed + 1) of \(report.steps.count); dry run rolled back, nothing was changed")
        } else {
            lines.append("store \(store): apply would bring it to '\(report.plan.targetVersion)'; dry run rolled back, nothing was changed")
        }
        return lines
    }

    static func counted(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }

    /// Prints the report; a step that would fail makes the command exit 1.
    static func print(_ report: RehearsalReport, store: String, format: OutputFormat) throws {
        switch format {
        case .json: printLine(json(report, store: store).rendered)
        case .text: text(report, store: store).forEach { printLine($0) }
        }
        if !report.wouldSucceed { throw ExitCode.failure }
    }
}
