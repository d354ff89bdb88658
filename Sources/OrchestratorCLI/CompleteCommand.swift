import ArgumentParser
import Engine
import Planning

struct CompleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "complete",
        abstract: "Finish an `apply --expand`: drop the previous version's views and run the deferred changes, in one transaction.",
        discussion: """
            Refused, with nothing changed, while sessions hold a lock on the previous version's
            views (they are named: pid and application_name); --force ends those sessions first.
            A heavyweight step's expansion: gives the waiting apply --expand run the proceed and
            waits for its switch-over, which drops the new version's read-only views.
            See docs/rolling-deploys.md and docs/rolling-deploys-heavyweight.md.
            """
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var formatOptions: FormatOptions
    @OptionGroup var outputOptions: OutputOptions

    @OptionGroup var lockOptions: ExpansionLockOptions

    @Flag(name: .long, help: "End the sessions still using the previous version's views (pg_terminate_backend), then complete.")
    var force = false

    func validate() throws {
        guard storeOptions.store != nil else { throw ValidationError("complete needs --store") }
    }

    func run() throws {
        try reportingFailures {
            let connection = try connect(try storeOptions.resolvedDatabaseURL(), lockWait: lockOptions.lockWait)
            defer { connection.close() }
            let report = try ExpansionCompletion(connection: connection, store: storeOptions.store!).complete(force: force, options: lockOptions.applyOptions)
            switch formatOptions.format {
            case .json: printLine(ExpandRendering.json(report).rendered)
            case .text: ExpandRendering.text(report).forEach { printLine($0) }
            }
        }
    }
}
