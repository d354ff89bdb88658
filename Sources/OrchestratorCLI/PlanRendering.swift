import Engine
import JSONRendering
import ObjectModel
import Planning

/// `plan` output: text for people, JSON for machines; the same value either way.
enum PlanRendering {
    static func json(_ plan: MigrationPlan) -> JSONValue {
        var fields = baseFields(plan)
        if !plan.replication.isEmpty { fields.append(("replication", replicationJSON(plan.replication))) }
        return .object(fields)
    }

    private static func baseFields(_ plan: MigrationPlan) -> [(String, JSONValue)] {
        [
            ("store", .string(plan.store)),
            ("model", .string(plan.modelName)),
            ("upToDate", .bool(plan.isUpToDate)),
            ("status", .string(statusName(plan.status))),
            ("storeVersion", plan.storeVersion.map(JSONValue.string) ?? .null),
            ("targetVersion", .string(plan.targetVersion)),
            ("currentVersion", .string(plan.currentVersion)),
            ("modelHash", .string(plan.targetModelHash)),
            ("storeModelHash", plan.storeModelHash.map(JSONValue.string) ?? .null),
            ("migrationRequired", .bool(plan.status == .migrationRequired)),
            ("executable", .bool(plan.isExecutable)),
            ("needsAllowDataLoss", .bool(plan.steps.contains { $0.hazards.contains(where: \.isDataLoss) })),
            ("blockers", .array(plan.blockers.map(JSONValue.string))),
            ("blockerDetails", .array(plan.blockerDetails.map { .object([("code", .string($0.code.rawValue)), ("message", .string($0.message))]) })),
            ("steps", .array(plan.steps.map(stepJSON))),
        ]
    }

    /// The store's publications, subscriptions, slots and standbys (docs/replication.md); in
    /// the plan only when there is any.
    static func replicationJSON(_ topology: ReplicationTopology) -> JSONValue {
        .object([
            ("publications", .array(topology.publications.map { publication in
                .object([("name", .string(publication.name)), ("form", .string(publication.form.rawValue)), ("tables", .array(publication.tables.map(JSONValue.string)))])
            })),
            ("subscriptions", .array(topology.subscriptions.map { subscription in
                .object([
                    ("name", .string(subscription.name)), ("enabled", .bool(subscription.isEnabled)), ("tables", .array(subscription.tables.map(JSONValue.string))),
                    ("syncing", .object(subscription.syncing.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })),
                ])
            })),
            ("slots", .array(topology.slots.map { slot in
                .object([("name", .string(slot.name)), ("kind", .string(slot.kind)), ("active", .bool(slot.isActive)), ("lagBytes", slot.lagBytes.map { .number(Int($0)) } ?? .null)])
            })),
            ("standbys", .array(topology.standbys.map { standby in
                .object([("name", .string(standby.name)), ("state", .string(standby.state)), ("replayLagSeconds", standby.replayLagSeconds.map(JSONValue.decimal) ?? .null)])
            })),
        ])
    }

    static func stepJSON(_ step: PlannedStep) -> JSONValue {
        .object([
            ("kind", .string(step.kind.rawValue)),
            ("from", step.from.map(JSONValue.string) ?? .null),
            ("to", .string(step.to)),
            ("statements", .array(step.statements.map { .string($0.sql.text) })),
            ("statementDetails", .array(step.statements.map { statement in
                .object([
                    ("sql", .string(statement.sql.text)),
                    ("lock", .string(statement.lock.rawValue)),
                    ("summary", .string(statement.summary)),
                ])
            })),
            ("hazards", .array(step.hazards.map(hazardJSON))),
            ("rowEstimate", .number(step.rowEstimate)),
            ("stagingSchema", step.staged.map { JSONValue.string($0.stagingSchema) } ?? .null),
            ("backupSchema", step.staged?.backupSchema.map(JSONValue.string) ?? .null),
            ("passesDone", .number(step.staged?.passesDone ?? 0)),
            ("passes", .array(step.passes.map { pass in
                .object([
                    ("stage", .string(pass.stage.rawValue)),
                    ("entityMapping", pass.entityMapping.map(JSONValue.string) ?? .null),
                    ("execution", .string(pass.execution.rawValue)),
                    ("policy", pass.stream?.policy.map(JSONValue.string) ?? .null),
                    ("rowEstimate", .number(pass.rowEstimate)),
                    ("statements", .array(pass.statements.map { .string($0.sql.text) })),
                    ("inParts", .bool(pass.split != nil)),
                ])
            })),
        ])
    }

    /// Code and message; for rows a mapping model leaves behind, also the entity and its rows
    /// (`estimatedRowsAreUpperBound` when they are at most that many).
    static func hazardJSON(_ hazard: Hazard) -> JSONValue {
        var fields: [(String, JSONValue)] = [("code", .string(hazard.code)), ("message", .string(hazard.message))]
        if let entity = hazard.entity { fields.append(("entity", .string(entity))) }
        if let rows = hazard.estimatedRows {
            fields += [("estimatedRows", .number(rows.rows)), ("estimatedRowsAreUpperBound", .bool(rows.isUpperBound))]
        }
        return .object(fields)
    }

    static func statementLines(_ statements: [PlannedStatement]) -> [String] {
        statements.flatMap { statement in
            ["-- \(statement.summary) [lock: \(statement.lock.rawValue)]", statement.sql.text + ";"]
        }
    }

    static func executionName(_ pass: PlannedPass) -> String {
        switch pass.execution {
        case .setBased: "set-based"
        case .streaming: "streaming"
        }
    }

    static func statusName(_ status: MigrationPlan.Status) -> String {
        switch status {
        case .missing: "missing"
        case .upToDate: "upToDate"
        case .migrationRequired: "migrationRequired"
        }
    }

    static func text(_ plan: MigrationPlan) -> [String] {
        var lines: [String] = []
        switch plan.status {
        case .upToDate:
            return ["store \(plan.store): up to date at '\(plan.targetVersion)' (model hash \(plan.targetModelHash)); nothing to do"]
        case .missing:
            lines.append("store \(plan.store): does not exist; the plan creates it at '\(plan.targetVersion)'")
        case .migrationRequired:
            lines.append("store \(plan.store): at '\(plan.storeVersion ?? "?")' (model hash \(plan.storeModelHash ?? "?")), target '\(plan.targetVersion)' (model hash \(plan.targetModelHash))")
            lines.append("migration required")
        }
        lines += plan.replication.lines.map { "replication: \($0)" }
        for (index, step) in plan.steps.enumerated() {
            lines.append("")
            let from = step.from.map { "'\($0)' -> " } ?? ""
            lines.append("-- step \(index + 1) of \(plan.steps.count): \(step.kind.rawValue) \(from)'\(step.to)', \(step.statements.count) statements, about \(step.rowEstimate) rows")
            for hazard in step.hazards {
                lines.append("-- hazard \(hazard.code): \(hazard.message)")
            }
            guard let work = step.staged else {
                lines += statementLines(step.statements)
                continue
            }
            let passCount = work.passes.count + 1
            if work.passesDone > 0 {
                lines.append("-- \(work.passesDone) of \(passCount) passes were done by an interrupted apply (kept in \(work.stagingSchema)): apply continues after them, apply --restart starts over")
            }
            lines.append("-- \(work.writeGuard.summary) [lock: \(work.writeGuard.lock.rawValue)]")
            lines.append(work.writeGuard.sql.text + ";")
            for (number, pass) in work.passes.enumerated() {
                var header = "-- pass \(number + 1) of \(passCount): \(pass.name), \(executionName(pass))"
                if pass.sourceTable != nil { header += ", about \(pass.rowEstimate) rows" }
                if pass.split != nil { header += ", in parts at once offline (--jobs), from \(ApplyOptions.defaultSplitRowsFrom) rows" }
                lines.append(header)
                lines += statementLines(pass.statements)
                if let stream = pass.stream {
                    lines.append("-- streamed in batches through Swift\(stream.policy.map { " (policy \($0))" } ?? ""): rows read by")
                    lines.append(stream.sourceRows.text + ";")
                }
            }
            lines.append("-- pass \(passCount) of \(passCount): swap, with the store's metadata and history")
            lines += statementLines(work.swap)
        }
        let losses = plan.steps.flatMap(\.hazards).filter(\.isDataLoss)
        if !losses.isEmpty {
            lines.append("")
            lines.append("apply needs --allow-data-loss: " + losses.map(\.message).joined(separator: "; "))
        }
        for blocker in plan.blockers {
            lines.append("cannot apply: \(blocker)")
        }
        return lines
    }
}

extension PlanRendering {
    /// The plan as a psql script; a plan that cannot run is refused, naming its blockers.
    static func sql(_ plan: MigrationPlan, model: VersionedModel) throws -> [String] {
        guard plan.isExecutable else { throw ScriptOfBlockedPlan(blockers: plan.blockers) }
        return try SQLScript(plan: plan, model: model).lines()
    }
}

/// `plan --format sql` of a plan that cannot run: no script is written.
struct ScriptOfBlockedPlan: Error, CustomStringConvertible {
    var blockers: [String]
    var description: String { "plan --format sql: the plan cannot run, so no script is written: \(blockers.joined(separator: "; "))" }
}
