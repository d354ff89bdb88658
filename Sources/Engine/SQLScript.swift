import Foundation
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding

/// `plan --format sql` cannot write a step: it needs Swift (a custom policy, a streamed pass).
public struct SQLScriptRefused: Error, CustomStringConvertible {
    public var step: Int
    public var stepCount: Int
    public var title: String
    /// Each streamed entity mapping, with its policy when it has one.
    public var reasons: [String]

    public var description: String {
        "plan --format sql: step \(step) of \(stepCount) (\(title)) needs Swift, which a SQL script cannot run: \(reasons.joined(separator: "; ")); review it with plan and run it with apply"
    }
}

/// The plan as a script a DBA reviews and runs with `psql -1 -v ON_ERROR_STOP=1 -f FILE`
/// (docs/workflow.md, "The plan as SQL"). It does what `apply` does, in one transaction:
/// 1. the store's advisory lock (the key `apply` takes), and a low `lock_timeout`;
/// 2. the metadata schema when missing, as `apply` creates it;
/// 3. a guard that stops unless the store is at the version the plan starts from;
/// 4. each step's statements, then its metadata and history rows — the rows counted through
///    psql's `ROW_COUNT`; a heavyweight step also registers its staging and backup schemas,
///    takes the write guard's lock in the same transaction, and drops its change triggers.
/// Checkpoints are left out: one transaction either does every pass or none.
public struct SQLScript {
    public var plan: MigrationPlan
    public var model: VersionedModel
    /// The `lock_timeout` the script sets, in milliseconds.
    public var lockTimeoutMilliseconds = ApplyOptions.defaultLockTimeoutMilliseconds

    public init(plan: MigrationPlan, model: VersionedModel) {
        self.plan = plan
        self.model = model
    }

    var store: String { plan.store }
    static let rows = "orchestrator_rows"
    static let started = "orchestrator_started"

    /// The script's lines; throws `SQLScriptRefused` for a step that needs Swift.
    public func lines() throws -> [String] {
        for (index, step) in plan.steps.enumerated() {
            let streamed = step.passes.filter { $0.execution == .streaming || $0.stream != nil }
            guard !streamed.isEmpty else { continue }
            throw SQLScriptRefused(
                step: index + 1, stepCount: plan.steps.count, title: Self.title(step),
                reasons: streamed.map { pass in
                    "entity mapping \(pass.entityMapping ?? pass.name) streams its rows" + (pass.stream?.policy.map { " through custom policy \($0)" } ?? "")
                }.uniqued()
            )
        }
        var lines = header()
        guard !plan.isUpToDate else { return lines }
        lines += preamble()
        for (index, step) in plan.steps.enumerated() {
            lines += ["", "-- step \(index + 1) of \(plan.steps.count): \(Self.title(step)), \(step.statements.count) statements"]
            lines += ["\\set \(Self.rows) 0", "SELECT clock_timestamp() AS \(Self.started) \\gset"]
            if let work = step.staged {
                let heavyweight = heavyweightLines(step, work)
                lines += heavyweight.body + recordLines(step) + heavyweight.cleanup
            } else {
                lines += statementLines(step.statements, counted: true) + recordLines(step)
            }
        }
        return lines
    }

    func header() -> [String] {
        switch plan.status {
        case .upToDate:
            return ["-- store \(store): up to date at '\(plan.targetVersion)' (model hash \(plan.targetModelHash)); nothing to do"]
        case .missing:
            return ["-- store \(store): does not exist; this script creates it at '\(plan.targetVersion)' (model \(plan.modelName))"] + usage()
        case .migrationRequired:
            return ["-- store \(store): from '\(plan.storeVersion ?? "?")' (model hash \(plan.storeModelHash ?? "?")) to '\(plan.targetVersion)' (model hash \(plan.targetModelHash)), \(plan.steps.count) step(s)"] + usage()
        }
    }

    func usage() -> [String] {
        [
            "-- Written by orchestrator plan --format sql. Review it, then run it as one transaction:",
            "--   psql -1 -v ON_ERROR_STOP=1 -f FILE",
            "-- It leaves the store, its metadata and its history as orchestrator apply would.",
        ]
    }

    /// Steps 1 to 3 of the script.
    func preamble() -> [String] {
        let meta = MetadataSchema.schema
        let stores = quoteIdentifier(meta) + "." + quoteIdentifier("stores")
        var lines = [
            "",
            "\\set ON_ERROR_STOP on",
            ExecutionPolicy.setLockTimeout(milliseconds: lockTimeoutMilliseconds).text + ";",
            "-- the store's lock, as apply takes it: waits for a running apply of this store",
            "SELECT pg_advisory_xact_lock(\(PostgresConnection.advisoryLockKey(for: "orchestrator:store:" + store)));",
            "-- the metadata schema, created when missing (as apply does)",
            "SELECT to_regclass(\(quoteLiteral(quoteIdentifier(meta) + "." + quoteIdentifier(StoreSchemas.table)))) IS NULL AS orchestrator_bootstrap \\gset",
            "\\if :orchestrator_bootstrap",
            guardBlock(
                condition: "to_regclass(\(quoteLiteral(stores))) IS NOT NULL",
                message: "the metadata in schema \(meta) has an older layout: run orchestrator apply (any store) once to upgrade it"
            ),
        ]
        lines += MetadataSchema.statements.map { $0.inlined + ";" }
        lines.append("\\endif")
        switch plan.status {
        case .missing:
            lines.append(guardBlock(
                condition: "EXISTS (SELECT 1 FROM \(stores) WHERE store = \(quoteLiteral(store))) OR EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = \(quoteLiteral(store)))",
                message: "schema \(store) exists now; this script was planned to create it"
            ))
        default:
            lines.append(guardBlock(
                condition: "(SELECT model_hash FROM \(stores) WHERE store = \(quoteLiteral(store))) IS DISTINCT FROM \(quoteLiteral(plan.storeModelHash ?? ""))",
                message: "store \(store) is not at '\(plan.storeVersion ?? "?")' (model hash \(plan.storeModelHash ?? "?")), the version this script was planned from"
            ))
        }
        return lines
    }

    /// A `DO` block raising `message` when `condition` holds.
    func guardBlock(condition: String, message: String) -> String {
        "DO $guard$ BEGIN IF \(condition) THEN RAISE EXCEPTION USING MESSAGE = \(quoteLiteral(message)); END IF; END $guard$;"
    }

    /// Each statement after its summary; with `counted`, its rows added up as `apply` does.
    func statementLines(_ statements: [PlannedStatement], counted: Bool) -> [String] {
        statements.flatMap { statement in
            ["-- \(statement.summary) [lock: \(statement.lock.rawValue)]", statement.sql.inlined + ";"] + (counted ? [countRows()] : [])
        }
    }

    func countRows() -> String {
        "SELECT :\(Self.rows) + :ROW_COUNT AS \(Self.rows) \\gset"
    }

    /// The store's metadata and the history row, as `apply` records them.
    func recordLines(_ step: PlannedStep) -> [String] {
        let record = StepRecord(store: store, model: model, step: step, plan: plan)
        var statements = record.metadata()
        statements.append(record.history(
            rows: SQL(unsafeRaw: ":\(Self.rows)"), startedAt: SQL(unsafeRaw: ":'\(Self.started)'::timestamptz"),
            durationMilliseconds: SQL(unsafeRaw: "round(extract(epoch FROM clock_timestamp() - :'\(Self.started)'::timestamptz) * 1000)::bigint"),
            appliedBy: "current_user || ' (psql script by ' || \(StoreMigrator.operatingSystemUser) || ')'", outcome: "succeeded", error: nil
        ))
        if step == plan.steps.last { statements.append(StoreSchemas.finishingChain(store: store)) }
        return ["-- the store's metadata and history"] + statements.map { $0.inlined + ";" }
    }

    static func title(_ step: PlannedStep) -> String {
        "\(step.kind.rawValue) \(step.from.map { "'\($0)' -> " } ?? "")'\(step.to)'"
    }
}

extension Array where Element: Hashable {
    /// The elements in order, each once.
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
