import ArgumentParser
import Engine
import JSONRendering
import ObjectModel

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List the store's migrations, restores and adoptions from its metadata, oldest first."
    )

    @Option(name: .long, help: "A versioned-model folder or .xcdatamodeld: the store defaults to its name in snake_case.")
    var model: String?

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var formatOptions: FormatOptions
    @OptionGroup var lockWaitOptions: LockWaitOptions
    /// `--verbose`, `--quiet`: the other commands get them with ModelOptions, which this one has not.
    @OptionGroup var outputOptions: OutputOptions

    func validate() throws {
        guard model != nil || storeOptions.store != nil else { throw ValidationError("pass --store, or --model to name the store after the model") }
    }

    func run() throws {
        try reportingFailures {
            let store = try storeOptions.store ?? storeOptions.storeName(for: ModelLoader.loadEachVersion(path: model!))
            let url = try storeOptions.resolvedDatabaseURL()
            let connection = try connect(url, lockWait: lockWaitOptions.lockWait)
            defer { connection.close() }
            let records = try StoreHistory.records(store: store, on: connection)
            switch formatOptions.format {
            case .json:
                printLine(JSONValue.object([("store", .string(store)), ("migrations", .array(records.map(\.json)))]).rendered)
            case .text:
                printLine("store \(store): \(records.count) recorded migration\(records.count == 1 ? "" : "s")")
                records.forEach { printLine($0.textLine) }
            }
        }
    }
}

extension MigrationRecord {
    /// `#3 2026-11-23T22:30:01.123Z heavyweight 'A' -> 'B': succeeded, 120 rows, 85 ms, by …`
    var textLine: String {
        let from = fromVersion.map { "'\($0)' -> " } ?? ""
        var line = "#\(id) \(startedAt) \(kind) \(from)'\(toVersion)': \(outcome), \(rows) row\(rows == 1 ? "" : "s"), \(durationMilliseconds) ms, by \(appliedBy)"
        if let error { line += ": \(error)" }
        return line
    }

    /// One entry of `history --format json`'s `migrations`; a public contract.
    var json: JSONValue {
        .object([
            ("id", .number(id)),
            ("kind", .string(kind)),
            ("from", fromVersion.map(JSONValue.string) ?? .null),
            ("to", .string(toVersion)),
            ("fromHash", fromHash.map(JSONValue.string) ?? .null),
            ("toHash", .string(toHash)),
            ("startedAt", .string(startedAt)),
            ("finishedAt", .string(finishedAt)),
            ("rows", .number(rows)),
            ("durationMs", .number(durationMilliseconds)),
            ("appliedBy", .string(appliedBy)),
            ("outcome", .string(outcome)),
            ("error", error.map(JSONValue.string) ?? .null),
            ("statements", .number(statementCount)),
        ])
    }
}
