import ArgumentParser
import Engine
import ObjectModel
import Planning

struct RollbackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollback",
        abstract: "Undo an `apply --expand` before `complete`: the store back at the previous version, in one transaction.",
        discussion: """
            Keeps every row and value the previous version can hold, written by either release. \
            What it cannot hold (values of attributes the new version added, rows of its new \
            entities) is counted and named first, each with a code; rows counted need \
            --allow-data-loss. Refused, with nothing changed, while sessions hold a lock on the \
            store's tables or the previous version's views; --force ends them first. \
            --dry-run prints the statements and the losses and changes nothing. \
            A heavyweight step's expansion: drops the staging schema and the new version's views \
            (the store's tables were never changed); the waiting apply --expand run is named, \
            and --force ends it. A heavyweight step's run stopped before that wait (killed, \
            --pause-timeout, a failure) is rolled back alike: its staging schema dropped. \
            A lightweight step's run stopped before its switch-over is undone with --model \
            (the model it ran with): the store back at the previous version's layout, in one \
            transaction; --dry-run rehearses it and rolls it back. See docs/rolling-deploys.md.
            """
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var formatOptions: FormatOptions
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var lockOptions: ExpansionLockOptions

    @OptionGroup var flags: RollbackFlags

    @Option(name: .long, help: "The model (versioned-model folder or .xcdatamodeld) of a lightweight apply --expand stopped before its switch-over: its new version is recorded only at the switch-over.")
    var model: String?

    func validate() throws {
        guard storeOptions.store != nil else { throw ValidationError("rollback needs --store") }
    }

    func run() throws {
        try reportingFailures {
            let connection = try connect(try storeOptions.resolvedDatabaseURL(), lockWait: lockOptions.lockWait)
            defer { connection.close() }
            let loaded = try model.map { try ModelLoader.loadEachVersion(path: $0) }
            let report = try ExpansionRollback(connection: connection, store: storeOptions.store!, model: loaded)
                .rollBack(dryRun: flags.dryRun, allowDataLoss: flags.allowDataLoss, force: flags.force, options: lockOptions.applyOptions)
            switch formatOptions.format {
            case .json: printLine(RollbackRendering.json(report).rendered)
            case .text: RollbackRendering.text(report).forEach { printLine($0) }
            }
        }
    }
}

/// `rollback`'s and `fleet rollback`'s consent and dry-run flags.
struct RollbackFlags: ParsableArguments {
    @Flag(name: .long, help: "Drop what the previous version cannot hold (values of attributes and links the new version added, rows of its new entities).")
    var allowDataLoss = false

    @Flag(name: .long, help: "Print the statements and what would be lost (rows counted), change nothing.")
    var dryRun = false

    @Flag(name: .long, help: "End the sessions holding a lock on the store's tables or the previous version's views (pg_terminate_backend), then roll back.")
    var force = false
}
