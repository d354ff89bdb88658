import Engine
import JSONRendering

/// `rollback`'s output: what it ran (or would run), and what the previous version cannot hold.
enum RollbackRendering {
    static func json(_ report: RollbackReport) -> JSONValue {
        .object([
            ("store", .string(report.store)),
            ("rolledBack", .bool(!report.isDryRun)),
            ("fromVersion", .string(report.fromVersion)),
            ("version", .string(report.version)),
            ("droppedSchema", .string(report.viewsSchema)),
            ("statements", .array(report.statements.map(JSONValue.string))),
            ("losses", .array(report.losses.map {
                .object([("code", .string($0.loss.code.rawValue)), ("message", .string($0.loss.message)), ("rows", .number($0.rows))])
            })),
            ("endedSessions", .array(report.endedSessions.map { .object([("pid", .number($0.pid)), ("applicationName", .string($0.applicationName))]) })),
            ("durationMs", .number(report.durationMilliseconds)),
        ])
    }

    static func text(_ report: RollbackReport) -> [String] {
        var lines = report.endedSessions.map { "ended \($0) (--force)" }
        if report.isDryRun {
            lines.append("store \(report.store): rollback '\(report.fromVersion)' -> '\(report.version)' would run (--dry-run, nothing changed):")
            lines += report.statements.map { "  \($0)" }
        } else {
            lines.append("store \(report.store): rolled back '\(report.fromVersion)' -> '\(report.version)': dropped \"\(report.viewsSchema)\", ran \(report.statements.count) statement\(report.statements.count == 1 ? "" : "s") (\(report.durationMilliseconds) ms)")
        }
        let lost = report.losses.filter { $0.rows > 0 }
        let heading = report.isDryRun ? "  would be lost (needs --allow-data-loss):" : "  lost (--allow-data-loss):"
        lines.append(lost.isEmpty ? "  nothing lost: '\(report.version)' holds every row and value" : heading)
        lines += lost.map { "    [\($0.loss.code.rawValue)] \($0)" }
        return lines
    }
}
