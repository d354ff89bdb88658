import ArgumentParser
import Engine
import Foundation
import JSONRendering
import ObjectModel
import Planning
import SQLBuilding

struct ApplyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Run the plan under the store's advisory lock; each step in one transaction."
    )

    @OptionGroup var modelOptions: ModelOptions
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var formatOptions: FormatOptions
    @OptionGroup var mappingOptions: MappingOptions
    @OptionGroup var heavyweightOptions: HeavyweightOptions

    @Option(name: .long, help: "Bring the store to this version instead of the current one.")
    var to: String?

    @Option(name: .long, help: "lock_timeout of each migration transaction, in milliseconds: the longest a reader or writer waits behind one of apply's lock requests; a transaction that times out is retried with backoff.")
    var lockTimeout: Int = ApplyOptions.defaultLockTimeoutMilliseconds

    @Option(name: .long, help: "Seconds to wait for another apply of the same store to finish (it is named while waiting); then exit 1.")
    var lockWait: Double = ApplyOptions.defaultLockWaitSeconds

    @Flag(name: .long, help: "Run steps that drop entities, attributes or relationships (and their data), or leave rows behind (a mapping model that does not read them): the backup alone is not consent.")
    var allowDataLoss = false

    @Flag(name: .long, help: "Discard what an interrupted heavyweight step left in <store>~staging and start it over (default: continue after its last checkpoint).")
    var restart = false

    func validate() throws {
        guard lockTimeout > 0 else { throw ValidationError("--lock-timeout must be a positive number of milliseconds") }
        guard lockWait >= 0, lockWait.isFinite else { throw ValidationError("--lock-wait must be a number of seconds, 0 or more") }
    }

    func run() throws {
        try reportingFailures {
            let model = try modelOptions.loadEachVersion()
            try modelOptions.checkVersion(to, in: model)
            try model.requireUsable([to ?? model.currentVersionName])
            let explicitMappings = try mappingOptions.explicitMappings(for: model)
            let url = try storeOptions.resolvedDatabaseURL()
            let connection = try connect(url)
            defer { connection.close() }
            let store = storeOptions.storeName(for: model)
            let migrator = heavyweightOptions.migrator(
                connection: connection, model: model, store: store, targetVersion: to, explicitMappings: explicitMappings
            )
            let isText = formatOptions.format == .text
            let progress = ProgressReporter(mode: ProgressReporter.Mode(format: formatOptions.format))
            // A failure mid-pass leaves a bar open: end its line before the error is printed.
            defer { progress.finish() }
            let options = ApplyOptions(lockTimeoutMilliseconds: lockTimeout, allowDataLoss: allowDataLoss, restart: restart, lockWaitSeconds: lockWait)
            let report = try migrator.apply(options: options, onStep: { number, count, step in
                if isText {
                    let title = ProgressRendering.stepTitle(kind: step.kind.rawValue, from: step.from, to: step.to)
                    printLine("step \(number) of \(count): \(title) (\(step.statements.count) statements)")
                }
            }, onProgress: progress.report, onLockWait: { holders in
                printNotice("waiting up to \(String(format: "%g", lockWait)) s (--lock-wait) for store \(store), which is being migrated by \(holders.map(\.description).joined(separator: "; "))")
            })
            // A heavyweight step swaps the migrated store in and keeps the old one beside it.
            // The backup is the first heavyweight step's (later ones of a chain keep none); nil
            // with --no-backup. After a chain an earlier run did not finish, the backup that
            // run made is kept.
            let backupSchema = report.appliedSteps.lazy.compactMap(\.step.backupSchema).first
                ?? report.plan.keptBackup.flatMap { kept in report.appliedSteps.contains { $0.step.kind == .heavyweight } ? kept : nil }
            switch formatOptions.format {
            case .json:
                printLine(JSONValue.object([
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
                    ("backupSchema", backupSchema.map(JSONValue.string) ?? .null),
                ]).rendered)
            case .text:
                if report.plan.isUpToDate {
                    printLine("store \(store): already up to date at '\(report.plan.targetVersion)'; nothing to do")
                } else {
                    let total = report.appliedSteps.reduce(0) { $0 + $1.durationMilliseconds }
                    printLine("store \(store): now at '\(report.plan.targetVersion)' (\(report.appliedSteps.count) step(s), \(total) ms)")
                }
                if let backupSchema {
                    printLine("store \(store): the old store is kept as schema \(quoteIdentifier(backupSchema)) (drop it when you no longer need it)")
                } else if report.appliedSteps.contains(where: { $0.step.kind == .heavyweight }) {
                    printLine("store \(store): the old store was dropped (--no-backup)")
                }
            }
        }
    }
}
