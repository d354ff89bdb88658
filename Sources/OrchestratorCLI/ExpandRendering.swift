import Engine
import JSONRendering
import Planning

/// `plan --expand`, `complete` and the live versions of `status`: what `apply --expand` leaves
/// for `complete`, and what each release sees meanwhile.
enum ExpandRendering {
    static func text(_ plan: MigrationPlan) -> [String] {
        guard let expansion = plan.steps.first?.phases?.expansion else { return [] }
        var lines = ["", "apply --expand: '\(expansion.oldVersion)' stays live in \(quoted(expansion.viewsSchema)) beside '\(expansion.newVersion)' in \(plan.store)"]
        lines.append(expansion.deferred.isEmpty ? "  deferred to complete: nothing" : "  deferred to complete:")
        lines += expansion.deferred.map { "    \($0.summary)" }
        return lines
    }

    /// `plan --expand --format json`: `plan --online`'s, with `expansion` on the step (null
    /// when the plan has none: a blocker, or nothing to do).
    static func json(_ plan: MigrationPlan) -> JSONValue {
        guard case .object(var fields) = OnlinePlanRendering.json(plan) else { return OnlinePlanRendering.json(plan) }
        let expansion = plan.steps.first?.phases?.expansion
        fields.append(("expansion", expansion.map { expansion in
            .object([
                ("oldVersion", .string(expansion.oldVersion)),
                ("newVersion", .string(expansion.newVersion)),
                ("viewsSchema", .string(expansion.viewsSchema)),
                ("deferred", .array(expansion.deferred.map { .object([("sql", .string($0.sql.text)), ("summary", .string($0.summary))]) })),
            ])
        } ?? .null))
        return .object(fields)
    }

    static func json(_ report: CompletionReport) -> JSONValue {
        .object([
            ("store", .string(report.store)),
            ("completed", .bool(true)),
            ("oldVersion", .string(report.oldVersion)),
            ("version", .string(report.newVersion)),
            ("droppedSchema", .string(report.viewsSchema)),
            ("statements", .array(report.statements.map(JSONValue.string))),
            ("endedSessions", .array(report.endedSessions.map { .object([("pid", .number($0.pid)), ("applicationName", .string($0.applicationName))]) })),
            ("durationMs", .number(report.durationMilliseconds)),
        ])
    }

    static func text(_ report: CompletionReport) -> [String] {
        report.endedSessions.map { "ended \($0) (--force)" } + [
            "store \(report.store): completed '\(report.oldVersion)' -> '\(report.newVersion)': dropped \(quoted(report.viewsSchema)), ran \(report.statements.count - 1) deferred statement\(report.statements.count == 2 ? "" : "s") (\(report.durationMilliseconds) ms)",
        ]
    }

    /// `status`'s `liveVersions`: the store's version in its schema, then the version served
    /// through views.
    static func liveVersions(store: String, version: String?, expansion: ExpansionRecord) -> JSONValue {
        .array([
            .object([("version", version.map(JSONValue.string) ?? .string(expansion.newVersion)), ("schema", .string(store))]),
            .object([("version", .string(expansion.oldVersion)), ("schema", .string(expansion.viewsSchema))]),
        ])
    }

    static func liveVersionsLine(store: String, version: String?, expansion: ExpansionRecord) -> String {
        "live versions: '\(version ?? expansion.newVersion)' in \(store), '\(expansion.oldVersion)' in \(quoted(expansion.viewsSchema)) (apply --expand at \(expansion.expandedAt); orchestrator complete ends it)"
    }

    private static func quoted(_ schema: String) -> String { "\"\(schema)\"" }
}
