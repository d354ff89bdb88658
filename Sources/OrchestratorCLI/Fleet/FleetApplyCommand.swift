import ArgumentParser
import Engine
import Foundation

struct FleetApplyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Migrate every store of the fleet, wave by wave, in parallel, journaled and resumable by any number of workers.",
        discussion: """
            Each store runs as `orchestrator apply` runs it: under its own advisory lock, planned
            again under it, each step in one transaction. The run is recorded in the journal
            (schema orchestrator_fleet); `--run NAME` again resumes it (stores done are skipped,
            the others tried again), and several processes given the same --run share it.
            SIGINT stops claiming stores; the running ones finish and the table is printed.
            Exit 0 when every store reached the target, else 1.
            """
    )

    @OptionGroup var options: FleetOptions
    @OptionGroup var mappingOptions: MappingOptions

    @Option(name: .long, help: "Stores migrated at once by this process (at most perServerJobs of the fleet file on one server).")
    var jobs: Int = 4

    @Option(name: .customLong("run"), help: "The run's name in the journal: a new name starts a run, a known one resumes it (default: a new name, printed).")
    var runName: String?

    @OptionGroup var lockOptions: ApplyLockOptions

    @Flag(name: .long, help: "Run each store's steps online (docs/online-migrations.md).")
    var online = false

    @Flag(name: .long, help: "Run each store's step as apply --expand does: online, the previous version kept live through views until `fleet complete` (docs/rolling-deploys.md).")
    var expand = false

    @Option(name: .long, help: "Rows per batch, as for apply.")
    var batchSize: Int = ApplyOptions.defaultBatchSize

    @Option(name: .long, help: ArgumentHelp("Run the fleet plan saved by `fleet plan --out FILE` (with the same --online or --expand): each store is planned again under its lock and refused, changing nothing and naming the difference, unless its plan is its cohort's.", valueName: "file"))
    var plan: String?

    func validate() throws {
        guard jobs > 0 else { throw ValidationError("--jobs must be at least 1") }
        guard batchSize > 0 else { throw ValidationError("--batch-size must be a positive number of rows") }
        if let runName, runName.isEmpty { throw ValidationError("--run must be a name") }
    }

    func run() throws {
        try reportingFailures {
            let (fleet, model, target) = try options.load()
            // A saved plan that cannot be used stops the command before anything else.
            let savedPlan = try plan.map { try FleetPlanFile.read(from: $0) }
            if let savedPlan, savedPlan.target != target.name {
                throw ValidationError("the fleet plan \(savedPlan.path) brings the stores to '\(savedPlan.target)', and this apply to '\(target.name)' (give --to, or run fleet plan --out again)")
            }
            try savedPlan?.requireMode(online: online, expand: expand)
            let explicitMappings = try mappingOptions.explicitMappings(for: model)
            var applyOptions = ApplyOptions(
                lockTimeoutMilliseconds: lockOptions.lockTimeout, allowDataLoss: lockOptions.allowDataLoss, lockWaitSeconds: lockOptions.lockWait,
                idleInTransactionTimeoutMilliseconds: lockOptions.idleTimeout, online: online || expand
            )
            applyOptions.expand = expand
            applyOptions.allowAllTablesPublication = lockOptions.allowAllTablesPublication
            applyOptions.batchSize = batchSize
            let name = runName ?? Self.newRunName()
            if runName == nil { printNotice("run \(name) (resume it with --run \(name))") }
            let fleetRun = FleetRun(
                fleet: fleet, model: model, target: target, explicitMappings: explicitMappings, options: applyOptions,
                run: name, jobs: jobs, connect: fleetConnect
            )
            let progress = FleetProgress(format: options.format)
            let stop = StopOnInterrupt()
            fleetRun.savedPlan = savedPlan
            fleetRun.shouldStop = { stop.isStopped }
            fleetRun.onStart = { progress.start(total: $0) }
            fleetRun.onOutcome = { progress.record($0) }
            fleetRun.onNotice = { printNotice($0) }
            try fleetRun.perform()
            let tally = try FleetApplyRendering.print(fleetRun, format: options.format)
            guard tally.missedCount == 0 else {
                let named = tally.missed.map(\.description).joined(separator: ", ")
                let more = tally.missedCount > tally.missed.count ? " and \(tally.missedCount - tally.missed.count) more" : ""
                printError("\(tally.missedCount) store\(tally.missedCount == 1 ? "" : "s") did not reach '\(target.name)': \(named)\(more); rerun with --run \(name)")
                throw ExitCode.failure
            }
        }
    }

    static func newRunName() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return "run-" + formatter.string(from: Date())
    }
}

/// SIGINT: no new claims; the process ends when the running stores finish.
final class StopOnInterrupt: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    private let source: DispatchSourceSignal

    init() {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [weak self] in
            self?.lock.withLock { self?.stopped = true }
            printNotice("interrupted: no new stores are claimed; the running ones finish")
        }
        source.resume()
    }

    var isStopped: Bool { lock.withLock { stopped } }
}
