import ArgumentParser
import Engine
import JSONRendering
import ObjectModel
import Planning

struct AdoptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adopt",
        abstract: "Make a hand-made schema an orchestrator store at a version, when it matches that version's contract; only metadata is written."
    )

    @OptionGroup var modelOptions: ModelOptions
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var formatOptions: FormatOptions

    @Option(name: .long, help: "The version the schema mirrors.")
    var version: String

    @OptionGroup var lockWaitOptions: LockWaitOptions

    func run() throws {
        try reportingFailures {
            let model = try modelOptions.loadEachVersion()
            try modelOptions.checkVersion(version, in: model)
            try model.requireUsable([version])
            let url = try storeOptions.resolvedDatabaseURL()
            let store = storeOptions.storeName(for: model)
            let connection = try connect(url, lockWait: lockWaitOptions.lockWait)
            defer { connection.close() }
            let target = model.version(named: version)!
            let drift = try StoreAdoption.adopt(store: store, modelName: model.name, version: target, lockWaitSeconds: lockWaitOptions.lockWait, onLockWait: lockWaitOptions.onWait(store: store), on: connection)
            switch formatOptions.format {
            case .json:
                printLine(JSONValue.object([
                    ("store", .string(store)),
                    ("version", .string(target.name)),
                    ("modelHash", .string(VersionHash.hashes(of: target).model)),
                    ("drift", .array(drift.items.map(\.json))),
                ]).rendered)
            case .text:
                printLine("store \(store): adopted at '\(target.name)'; its metadata was written, nothing else")
                drift.items.forEach { printLine("  \($0) (allowed)") }
            }
        }
    }
}
