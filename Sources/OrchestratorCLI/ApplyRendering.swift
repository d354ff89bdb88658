import Engine
import JSONRendering
import ObjectModel
import Planning
import SQLBuilding

/// `apply` output: text for people, JSON for machines; the same report either way.
enum ApplyRendering {
    /// The schema the old store was kept in: the first heavyweight step's backup (later ones of
    /// a chain keep none); nil with --no-backup. After a chain an earlier run did not finish,
    /// the backup that run made is kept.
    static func backupSchema(of report: ApplyReport) -> String? {
        report.appliedSteps.lazy.compactMap { $0.step.staged?.backupSchema }.first
            ?? report.plan.keptBackup.flatMap { kept in report.appliedSteps.contains { $0.step.kind == .heavyweight } ? kept : nil }
    }

    static func json(_ report: ApplyReport, store: String) -> JSONValue {
        .object([
            ("store", .string(store)),
            ("version", .string(report.plan.targetVersion)),
            ("modelHash", .string(report.plan.targetModelHash)),
            ("wasUpToDate", .bool(report.plan.isUpToDate)),
            ("steps", .array(report.appliedSteps.map { applied in
                .object([
                    ("kind", .string(applied.step.kind.rawValue)),
                    ("from", applied.step.from.map(JSONValue.string) ?? .null),
                    ("to", .string(applied.step.to)),
                    ("rows", .number(applied.rows)),
                    ("durationMs", .number(applied.durationMilliseconds)),
                ])
            })),
            ("backupSchema", backupSchema(of: report).map(JSONValue.string) ?? .null),
        ])
    }

    static func text(_ report: ApplyReport, store: String) -> [String] {
        var lines: [String] = []
        if report.plan.isUpToDate {
            lines.append("store \(store): already up to date at '\(report.plan.targetVersion)'; nothing to do")
        } else {
            let total = report.appliedSteps.reduce(0) { $0 + $1.durationMilliseconds }
            lines.append("store \(store): now at '\(report.plan.targetVersion)' (\(report.appliedSteps.count) step(s), \(total) ms)")
        }
        if let backupSchema = backupSchema(of: report) {
            lines.append("store \(store): the old store is kept as schema \(quoteIdentifier(backupSchema)) (drop it when you no longer need it)")
        } else if let retired = report.appliedSteps.compactMap(\.deferredCleanup).last(where: { $0.role == .retired }) {
            lines.append("store \(store): the old store is set aside as schema \(quoteIdentifier(retired.schema)) until it can be dropped: the next apply drops it (--no-backup)")
        } else if report.appliedSteps.contains(where: { $0.step.kind == .heavyweight }) {
            lines.append("store \(store): the old store was dropped (--no-backup)")
        }
        return lines
    }
}
