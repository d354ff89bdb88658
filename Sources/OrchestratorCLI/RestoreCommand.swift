import ArgumentParser
import Engine
import JSONRendering
import ObjectModel
import SQLBuilding

struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Undo a heavyweight step: put the backup <store>~ back as the store, with its metadata, and keep the current store as <store>~undone."
    )

    @OptionGroup var modelOptions: ModelOptions
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var formatOptions: FormatOptions

    @OptionGroup var lockWaitOptions: LockWaitOptions

    func run() throws {
        try reportingFailures {
            let model = try modelOptions.loadEachVersion()
            let url = try storeOptions.resolvedDatabaseURL()
            let store = storeOptions.storeName(for: model)
            let connection = try connect(url, lockWait: lockWaitOptions.lockWait)
            defer { connection.close() }
            let report = try StoreRestore.restore(store: store, model: model, lockWaitSeconds: lockWaitOptions.lockWait, onLockWait: lockWaitOptions.onWait(store: store), on: connection)
            switch formatOptions.format {
            case .json:
                printLine(JSONValue.object([
                    ("store", .string(store)),
                    ("from", .string(report.fromVersion)),
                    ("to", .string(report.toVersion)),
                    ("undoneSchema", .string(report.undoneSchema)),
                ]).rendered)
            case .text:
                printLine("store \(store): restored from its backup, now at '\(report.toVersion)' (was '\(report.fromVersion)')")
                printLine("store \(store): the replaced store is kept as schema \(quoteIdentifier(report.undoneSchema)) (drop it when you no longer need it)")
            }
        }
    }
}
