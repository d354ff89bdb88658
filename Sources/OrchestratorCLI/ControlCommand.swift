import ArgumentParser
import Engine
import JSONRendering

/// `orchestrator control pause|resume`: holds or lets go the runs of a store between two of
/// their batches (`StoreControls`, docs/online-migrations.md "Pausing and slowing a run").
struct ControlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "control",
        abstract: "Pause or resume the running and future applies of a store, between two of their batches.",
        discussion: """
            pause: the store's applies wait after their current batch (committed, resumable),
            shown in their progress as "paused by orchestrator control", at most their
            --pause-timeout; then they stop, and apply again continues.
            resume: they go on with their next batch.
            """
    )

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case pause
        case resume
    }

    @Argument(help: "pause or resume.")
    var action: Action

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var formatOptions: FormatOptions
    @OptionGroup var lockWaitOptions: LockWaitOptions

    func validate() throws {
        guard storeOptions.store != nil else { throw ValidationError("control needs --store: the store whose runs to pause or resume") }
    }

    /// Writes the store's control row and says what changed.
    func run() throws {
        try reportingFailures {
            let store = storeOptions.store!, paused = action == .pause
            let connection = try connect(try storeOptions.resolvedDatabaseURL(), lockWait: lockWaitOptions.lockWait)
            defer { connection.close() }
            let wasPaused = try StoreControls.set(store: store, paused: paused, on: connection)
            switch formatOptions.format {
            case .json:
                printLine(JSONValue.object([("store", .string(store)), ("paused", .bool(paused)), ("wasPaused", .bool(wasPaused))]).rendered)
            case .text where paused:
                printLine("store \(store): paused\(wasPaused ? " (it already was)" : ""): its runs wait after their current batch until orchestrator control resume, at most their --pause-timeout (then they stop, and apply again continues)")
            case .text:
                printLine("store \(store): resumed\(wasPaused ? "" : " (it was not paused)"): its runs go on from their next batch")
            }
        }
    }
}
