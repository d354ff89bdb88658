import ArgumentParser
import Engine
import Foundation
import JSONRendering
import ObjectModel
import Planning

struct ApplyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Run the plan under the store's advisory lock; each step in one transaction."
    )

    @OptionGroup var modelOptions: ModelOptions
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var formatOptions: FormatOptions
    @OptionGroup var migrationOptions: MigrationOptions

    @Option(name: .long, help: "Bring the store to this version instead of the current one.")
    var to: String?

    @OptionGroup var lockOptions: ApplyLockOptions

    @Flag(name: .long, help: "Discard what an interrupted heavyweight step left in <store>~staging and start it over (default: continue after its last checkpoint).")
    var restart = false

    @Option(name: .long, help: ArgumentHelp("Run only the plan saved by `plan --out FILE`: plan again under the store's lock and stop, changing nothing, unless the result is identical (the differences are named).", valueName: "file"))
    var plan: String?

    @Flag(name: .long, help: "Rehearse: run every step, pre-checks and heavyweight passes included, in one transaction that is rolled back; report each step's time, rows and lock waits, and whether it would succeed (exit 1 if not).")
    var dryRun = false

    @Flag(name: .long, help: "Keep the application able to read and write the store through the whole migration (docs/online-migrations.md); a step that cannot run so is refused, with nothing changed.")
    var online = false

    @Flag(name: .long, help: "Implies --online: defer the step's destructive changes to `orchestrator complete` and serve the previous version through views in \"<store>@<version>\" meanwhile, for a rolling deploy (docs/rolling-deploys.md).")
    var expand = false

    @Option(name: .long, help: "Rows per batch: of a backfill under --online (default 5000, then adapted to --batch-time; given alone, every batch takes this many), of the streaming path of a heavyweight step (always this many).")
    var batchSize: Int?

    @Option(name: .long, help: ArgumentHelp("How long one batch of a backfill under --online should take: each batch's size is adapted to it, between \(BatchSizing.defaultMinimum) and \(BatchSizing.defaultMaximum) rows (milliseconds, or 250ms, 1s; default \(ApplyOptions.defaultBatchTimeMilliseconds) ms unless --batch-size is given alone).", valueName: "duration"))
    var batchTime: String?

    @Option(name: .long, help: ArgumentHelp("The longest a run waits between batches while `orchestrator control pause` holds it; it then stops, and apply again continues (seconds, or 10m, 2h; default 1h).", valueName: "duration"))
    var pauseTimeout: String?

    @Flag(name: .long, help: "With --online: each step does all its work, then waits before its switch-over (the application's writes going on) until `orchestrator control proceed --store S`, at most --postpone-timeout.")
    var postponeSwitchOver = false

    @Option(name: .long, help: ArgumentHelp("The longest --postpone-switch-over waits for `orchestrator control proceed`; the run then stops, and apply again continues (seconds, or 30m, 24h; default 24h).", valueName: "duration"))
    var postponeTimeout: String?

    @Option(name: .long, help: ArgumentHelp("Batches wait while a physical standby's replay lags the primary by more than this, or its replay has stood still this long (seconds, or 500ms, 1m; default 10 s; 0 turns it off).", valueName: "duration"))
    var maxReplicaLag: String?

    @Option(name: .long, help: ArgumentHelp("Batches wait while a logical replication slot is more than this many bytes of WAL behind (default: off).", valueName: "bytes"))
    var maxSlotLag: Int64?

    @Option(name: .long, help: ArgumentHelp("A logical replication slot of the store's database that --max-slot-lag watches (repeatable; default: every logical slot of the server).", valueName: "name"))
    var slot: [String] = []

    @Option(name: .long, help: ArgumentHelp("The longest a run waits for a standby or a slot (--max-replica-lag, --max-slot-lag); it then stops, and apply again continues (seconds, or 10m, 1h; default 10 min).", valueName: "duration"))
    var throttleTimeout: String?

    @Option(name: .long, help: ArgumentHelp("Sessions a heavyweight step's set-based copies may use at once: those of different entity mappings, and offline the parts of one big table's copy (default: this machine's processors, at most 4).", valueName: "n"))
    var jobs: Int?

    @Option(name: .long, help: ArgumentHelp("A subscriber's database URL (repeatable): migrate the same store there too, in the order that keeps logical replication flowing (docs/replication.md).", valueName: "url"))
    var subscriber: [String] = []

    @Option(name: .long, help: ArgumentHelp("The longest apply --subscriber waits for a subscription to apply what the publisher wrote, or for its worker to stop (seconds, or 10m, 1h; default 2 min).", valueName: "duration"))
    var subscriberWait: String?

    @Flag(name: .long, help: "Migrate a store that a subscription writes into without its publisher (refused otherwise: the publisher's changes would stop fitting it).")
    var allowSubscriberAlone = false

    @Flag(name: .long, help: "With --subscriber: run a step that drops published columns beside a rename, a type change or a table dropped (replicationUnorderedDrop), the subscriptions disabled meanwhile; keep writes to the store out during it.")
    var allowUnorderedDrop = false

    func validate() throws {
        if let batchSize, batchSize <= 0 { throw ValidationError("--batch-size must be a positive number of rows") }
        _ = try batchTiming()
        _ = try throttle()
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if expand && (dryRun || !subscriber.isEmpty) {
            throw ValidationError("--expand runs one store's step online and keeps the previous version live: it cannot be rehearsed (--dry-run) or migrate subscribers")
        }
        if dryRun && online {
            throw ValidationError("--dry-run rehearses every step in one transaction, and --online commits in phases (CREATE INDEX CONCURRENTLY cannot run in a transaction): rehearse without --online")
        }
        if postponeSwitchOver && !online && !expand { throw ValidationError("--postpone-switch-over needs --online: only an online step keeps the application writing while it waits") }
        _ = try postponeTimeoutSeconds()
        _ = try subscriberWaitSeconds()
        if !subscriber.isEmpty && dryRun { throw ValidationError("--dry-run rehearses one database: rehearse the publisher and each subscriber on its own") }
    }

    /// `--batch-size`, `--batch-time` and `--pause-timeout` as `ApplyOptions` takes them: the
    /// size adapts to the time target unless a size alone was given.
    func batchTiming() throws -> (size: Int, milliseconds: Int?, pauseSeconds: Double) {
        let milliseconds = try batchTime.map { text in
            guard let seconds = DurationText.seconds(text, bareUnitSeconds: 0.001), seconds >= 0.001 else {
                throw ValidationError("--batch-time must be a duration of 1 ms or more: milliseconds, or 250ms, 1s (got '\(text)')")
            }
            return Int((seconds * 1000).rounded())
        }
        let pause = try pauseTimeout.map { text in
            guard let seconds = DurationText.seconds(text, bareUnitSeconds: 1) else {
                throw ValidationError("--pause-timeout must be a positive duration: seconds, or 10m, 2h (got '\(text)')")
            }
            return seconds
        }
        let adapted = milliseconds ?? (batchSize == nil ? ApplyOptions.defaultBatchTimeMilliseconds : nil)
        return (batchSize ?? ApplyOptions.defaultBatchSize, adapted, pause ?? ApplyOptions.defaultPauseTimeoutSeconds)
    }

    func run() throws {
        try reportingFailures {
            // A saved plan that cannot be used stops the command before anything else.
            let expectedPlan = try plan.map { ExpectedPlan(saved: try SavedPlan.read(from: $0), file: $0) }
            try migrationOptions.withMigrator(model: modelOptions, store: storeOptions, target: to, lockWait: lockOptions.lockWait) { _, migrator in
                let store = migrator.store
                let isText = formatOptions.format == .text
                let progress = ProgressReporter(mode: ProgressReporter.Mode(format: formatOptions.format))
                // A failure mid-pass leaves a bar open: end its line before the error is printed.
                defer { progress.finish() }
                var options = ApplyOptions(lockTimeoutMilliseconds: lockOptions.lockTimeout, allowDataLoss: lockOptions.allowDataLoss, restart: restart, lockWaitSeconds: lockOptions.lockWait, idleInTransactionTimeoutMilliseconds: lockOptions.idleTimeout, online: online || expand)
                options.expand = expand
                (options.batchSize, options.batchTimeMilliseconds, options.pauseTimeoutSeconds) = try batchTiming()
                options.jobs = jobs
                options.postponeSwitchOver = postponeSwitchOver
                options.postponeTimeoutSeconds = try postponeTimeoutSeconds()
                let throttle = try throttle()
                try throttle.requireSlots(on: migrator.connection)
                options.betweenBatches.append(throttle)
                options.expectedPlan = expectedPlan
                options.allowSubscriberAlone = allowSubscriberAlone
                options.allowUnorderedDrop = allowUnorderedDrop
                options.allowAllTablesPublication = lockOptions.allowAllTablesPublication
                let onStep = { (number: Int, count: Int, step: PlannedStep) in
                    if isText {
                        let title = ProgressRendering.stepTitle(kind: step.kind.rawValue, from: step.from, to: step.to)
                        printLine("step \(number) of \(count): \(title) (\(step.statements.count) statements)")
                    }
                }
                let onLockWait: LockWaitHandler = { holders in
                    printNotice("waiting up to \(String(format: "%g", lockOptions.lockWait)) s (--lock-wait) for store \(store), which is being migrated by \(holders.map(\.description).joined(separator: "; "))")
                }
                if dryRun {
                    let rehearsal = try migrator.rehearse(options: options, onStep: onStep, onProgress: progress.report, onLockWait: onLockWait)
                    progress.finish()
                    try RehearsalRendering.print(rehearsal, store: store, format: formatOptions.format)
                    return
                }
                if !subscriber.isEmpty {
                    try applyWithSubscribers(migrator, options: options, onStep: onStep, progress: progress, onLockWait: onLockWait)
                    return
                }
                let report = try migrator.apply(options: options, onStep: onStep, onProgress: progress.report, onLockWait: onLockWait)
                progress.finish()
                report.deferredCleanups.forEach { printNotice($0.description) }
                switch formatOptions.format {
                case .json: printLine(ApplyRendering.json(report, store: store).rendered)
                case .text: ApplyRendering.text(report, store: store).forEach { printLine($0) }
                }
            }
        }
    }
}
