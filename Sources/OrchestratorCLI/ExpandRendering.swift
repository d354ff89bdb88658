import Engine
import JSONRendering
import Planning

/// `plan --expand`, `complete` and the live versions of `status`: what `apply --expand` leaves
/// for `complete`, and what each release sees meanwhile.
enum ExpandRendering {
    static func text(_ plan: MigrationPlan) -> [String] {
        if let views = plan.steps.first?.staged?.newVersionViews { return heavyweightText(views) }
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
        if let views = plan.steps.first?.staged?.newVersionViews {
            fields.append(("expansion", heavyweightJSON(views)))
            return .object(fields)
        }
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
            ("switchedOver", .bool(report.switchedOver)),
        ])
    }

    static func text(_ report: CompletionReport) -> [String] {
        if report.switchedOver {
            return report.endedSessions.map { "ended \($0) (--force)" } + [
                "store \(report.store): completed '\(report.oldVersion)' -> '\(report.newVersion)': the apply --expand run switched over and dropped \(quoted(report.viewsSchema)) (\(report.durationMilliseconds) ms)",
            ]
        }
        return report.endedSessions.map { "ended \($0) (--force)" } + [
            "store \(report.store): completed '\(report.oldVersion)' -> '\(report.newVersion)': dropped \(quoted(report.viewsSchema)), ran \(report.statements.count - 1) deferred statement\(report.statements.count == 2 ? "" : "s") (\(report.durationMilliseconds) ms)",
        ]
    }

    /// `status`'s `liveVersions`: the store's version in its schema, then the version served
    /// through views.
    static func liveVersions(store: String, version: String?, expansion: ExpansionRecord) -> JSONValue {
        liveVersions(store: store, version: version, expansion: expansion.inFlight)
    }

    /// The same from an expansion in flight (`fleet status`'s survey).
    static func liveVersions(store: String, version: String?, expansion: ExpansionInFlight) -> JSONValue {
        if expansion.servesNewVersion(of: store) {
            return .array([
                .object([("version", .string(version ?? expansion.oldVersion)), ("schema", .string(store))]),
                .object([("version", .string(expansion.newVersion)), ("schema", .string(expansion.viewsSchema)), ("readOnly", .bool(expansion.writtenTables.isEmpty))]
                    + (expansion.writtenTables.isEmpty ? [] : [("writtenTables", .array(expansion.writtenTables.map(JSONValue.string)))])),
            ])
        }
        return .array([
            .object([("version", version.map(JSONValue.string) ?? .string(expansion.newVersion)), ("schema", .string(store))]),
            .object([("version", .string(expansion.oldVersion)), ("schema", .string(expansion.viewsSchema))]),
        ])
    }

    static func liveVersionsLine(store: String, version: String?, expansion: ExpansionRecord) -> String {
        if expansion.inFlight.servesNewVersion(of: store) {
            let served = expansion.writtenTables.isEmpty ? "read-only" : "written through its views (\(expansion.writtenTables.joined(separator: ", ")))"
            return "live versions: '\(version ?? expansion.oldVersion)' in \(store), '\(expansion.newVersion)' \(served) in \(quoted(expansion.viewsSchema)) (apply --expand of a heavyweight step at \(expansion.expandedAt); orchestrator complete switches over)"
        }
        return "live versions: '\(version ?? expansion.newVersion)' in \(store), '\(expansion.oldVersion)' in \(quoted(expansion.viewsSchema)) (apply --expand at \(expansion.expandedAt); orchestrator complete ends it)"
    }

    /// A heavyweight step: what each release can do in each phase.
    private static func heavyweightText(_ views: NewVersionViews) -> [String] {
        let served = views.isReadOnly ? "read-only" : "written through \(views.writes?.file ?? "")"
        let writes = views.isReadOnly
            ? "a write through it fails (25006, read-only until complete)"
            : "a write to \(views.writes?.writtenTables.joined(separator: ", ") ?? "") is translated by the reverse mapping into the store's tables (a join table's pair is seen after the next round, a row's at once)"
                + ((views.writes?.readOnly.isEmpty ?? true) ? "" : "; a write to another table fails (25006)")
        var lines = [
            "",
            "apply --expand: '\(views.oldVersion)' stays live in \(views.store), read and written as always; '\(views.version)' is served \(served) in \(quoted(views.schema))",
            "  1. passes, catch-up rounds, stage 3's build: the store's tables stay at '\(views.oldVersion)'; '\(views.version)' is not served yet",
            "  2. the wait for complete: \(quoted(views.schema)) reads the staging tables in the shape of '\(views.version)', the rounds carrying the writes of '\(views.oldVersion)' into them; \(writes)",
            "  3. orchestrator complete --store \(views.store): the last round under the write guard and the swap; \(quoted(views.schema)) is dropped, and '\(views.version)' is read and written in \(views.store)",
            "  orchestrator rollback --store \(views.store) instead: the staging work and the views are dropped, the store stays at '\(views.oldVersion)' with every row",
            "  deferred to complete: the switch-over (nothing else)",
        ]
        for (table, why) in (views.writes?.readOnly ?? [:]).sorted(by: { $0.key < $1.key }) {
            lines.append("  read-only in \(quoted(views.schema)): \(table): \(why)")
        }
        return lines
    }

    private static func heavyweightJSON(_ views: NewVersionViews) -> JSONValue {
        .object([
            ("oldVersion", .string(views.oldVersion)),
            ("newVersion", .string(views.version)),
            ("viewsSchema", .string(views.schema)),
            ("serves", .string("newVersion")),
            ("readOnly", .bool(views.isReadOnly)),
        ] + (views.writes.map { writes in [
            ("reverseMapping", .string(writes.file)),
            ("writtenTables", .array(writes.writtenTables.map(JSONValue.string))),
            ("readOnlyTables", .array(writes.readOnly.sorted { $0.key < $1.key }.map { .object([("table", .string($0.key)), ("reason", .string($0.value))]) })),
        ] } ?? []) + [
            ("deferred", .array([])),
        ])
    }

    private static func quoted(_ schema: String) -> String { "\"\(schema)\"" }
}
