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
            See docs/rolling-deploys.md.
            """
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var formatOptions: FormatOptions
    @OptionGroup var outputOptions: OutputOptions

    @Option(name: .long, help: "lock_timeout of the transaction, in milliseconds; it is retried with backoff.")
    var lockTimeout: Int = ApplyOptions.defaultLockTimeoutMilliseconds

    @Option(name: .long, help: "Seconds to wait for another apply or complete of the store to finish.")
    var lockWait: Double = ApplyOptions.defaultLockWaitSeconds

    @Flag(name: .long, help: "End the sessions still using the previous version's views (pg_terminate_backend), then complete.")
    var force = false

    func validate() throws {
        guard storeOptions.store != nil else { throw ValidationError("complete needs --store") }
        guard lockTimeout > 0 else { throw ValidationError("--lock-timeout must be a positive number of milliseconds") }
        guard lockWait >= 0, lockWait.isFinite else { throw ValidationError("--lock-wait must be a number of seconds, 0 or more") }
    }

    func run() throws {
        try reportingFailures {
            let connection = try connect(try storeOptions.resolvedDatabaseURL(), lockWait: lockWait)
            defer { connection.close() }
            let options = ApplyOptions(lockTimeoutMilliseconds: lockTimeout, lockWaitSeconds: lockWait)
            let report = try ExpansionCompletion(connection: connection, store: storeOptions.store!).complete(force: force, options: options)
            switch formatOptions.format {
            case .json: printLine(ExpandRendering.json(report).rendered)
            case .text: ExpandRendering.text(report).forEach { printLine($0) }
            }
        }
    }
}
