import ArgumentParser
import Engine
import ObjectModel
import Planning

/// `plan --format`: the formats of the other commands, and the plan as a psql script.
enum PlanFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json, sql
}

struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show what `apply` would run: every step and statement, with its lock and hazards."
    )

    @OptionGroup var modelOptions: ModelOptions
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var migrationOptions: MigrationOptions
    @OptionGroup var lockWaitOptions: LockWaitOptions

    @Option(name: .long, help: "Output format: text, json, or sql (a script to review and run with psql -1 -v ON_ERROR_STOP=1 -f; exit 1 for a step that needs Swift).")
    var format: PlanFormat = .text

    @Option(name: .long, help: "Plan to this version instead of the current one.")
    var to: String?

    @Option(name: .long, help: ArgumentHelp("Also save the plan as JSON, with fingerprints of the store, models, mapping models and options, for `apply --plan FILE`.", valueName: "file"))
    var out: String?

    @Flag(name: .long, help: "With --format sql: write the script even when a step loses data (dropped entities, attributes or relationships, rows a mapping model leaves behind); as for apply, nothing is dropped without it.")
    var allowDataLoss = false

    @Flag(name: .long, help: "Show how `apply --online` would run each step: its phases, the lock each takes and how long it holds it.")
    var online = false

    @Flag(name: .long, help: "Show how `apply --expand` would run the step (implies --online): its destructive changes deferred to `complete`, the previous version served through views (docs/rolling-deploys.md).")
    var expand = false

    @Flag(name: .long, help: "With --online or --expand: show the wait each heavyweight step makes before its switch-over under `apply --postpone-switch-over`.")
    var postponeSwitchOver = false

    func validate() throws {
        if postponeSwitchOver && !online && !expand { throw ValidationError("--postpone-switch-over needs --online: only an online step keeps the application writing while it waits") }
        if expand && format == .sql {
            throw ValidationError("--expand cannot be written as a script: run apply --expand (or save the plan with --out and run apply --expand --plan FILE)")
        }
        if format == .sql && online {
            throw ValidationError("--format sql writes the plan as one transaction, and --online runs it in phases that commit separately: choose one")
        }
    }

    func run() throws {
        try reportingFailures {
            try migrationOptions.withMigrator(model: modelOptions, store: storeOptions, target: to, lockWait: lockWaitOptions.lockWait) { model, migrator in
                let plan = try migrator.plan(mode: expand ? .expand : online ? .online : .offline, postponesSwitchOver: postponeSwitchOver)
                // The script first: a plan it refuses is neither printed nor saved.
                // A script runs without apply's checks: data loss needs the same consent here.
                if format == .sql { try DataLossNotAllowed.check(plan, options: ApplyOptions(allowDataLoss: allowDataLoss)) }
                let script = format == .sql ? try PlanRendering.sql(plan, model: model) : []
                if let out { try SavedPlan(plan: plan, migrator: migrator, online: online || expand, expand: expand).write(to: out) }
                switch format {
                case .json: printLine((expand ? ExpandRendering.json(plan) : online ? OnlinePlanRendering.json(plan) : PlanRendering.json(plan)).rendered)
                case .text:
                    PlanRendering.text(plan).forEach { printLine($0) }
                    if online || expand { OnlinePlanRendering.text(plan).forEach { printLine($0) } }
                    if expand { ExpandRendering.text(plan).forEach { printLine($0) } }
                case .sql: script.forEach { printLine($0) }
                }
                if let out, format == .text {
                    let flags = expand ? "--expand " : ""
                    printLine("plan saved to \(out): apply it with apply \(flags)--plan \(out)")
                }
            }
        }
    }
}
