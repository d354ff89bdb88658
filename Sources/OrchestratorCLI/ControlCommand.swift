import ArgumentParser
import Engine
import JSONRendering
import PostgresClient

/// `orchestrator control pause|resume|proceed`: holds or lets go the runs of a store between
/// two of their batches, or lets a run postponed before its switch-over switch over
/// (`StoreControls`, docs/online-migrations.md "Pausing and slowing a run", docs/replication.md
/// "Steering a running migration").
struct ControlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "control",
        abstract: "Pause or resume the running and future applies of a store, between two of their batches, or let a postponed switch-over proceed.",
        discussion: """
            pause: the store's applies wait after their current batch (committed, resumable),
            shown in their progress as "paused by orchestrator control", at most their
            --pause-timeout; then they stop, and apply again continues.
            resume: they go on with their next batch.
            proceed: the store's apply --online --postpone-switch-over, waiting before the
            switch-over of its step (or still working towards it), switches over; a run
            started later waits for a proceed of its own.
            """
    )

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case pause
        case resume
        case proceed
    }

    @Argument(help: "pause, resume or proceed.")
    var action: Action

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var formatOptions: FormatOptions
    @OptionGroup var lockWaitOptions: LockWaitOptions

    func validate() throws {
        guard storeOptions.store != nil else { throw ValidationError("control needs --store: the store whose runs to pause, resume or let proceed") }
    }

    /// Writes the store's control row and says what changed.
    func run() throws {
        try reportingFailures {
            let store = storeOptions.store!, paused = action == .pause
            let connection = try connect(try storeOptions.resolvedDatabaseURL(), lockWait: lockWaitOptions.lockWait)
            defer { connection.close() }
            if action == .proceed { return try proceed(store: store, on: connection) }
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

    /// Lets the store's postponed switch-over go, and says which step it is, if any.
    private func proceed(store: String, on connection: PostgresConnection) throws {
        let step = try StoreControls.proceed(store: store, on: connection)
        switch formatOptions.format {
        case .json:
            printLine(JSONValue.object([("store", .string(store)), ("proceed", .bool(true)), ("postponedStep", step.map(JSONValue.string) ?? .null)]).rendered)
        case .text:
            if let step {
                printLine("store \(store): proceed: the run postponed before the switch-over of \(step) switches over at its next check (within a second while it waits)")
            } else {
                printLine("store \(store): proceed recorded, but no run of it postpones a switch-over now; a run started later with --postpone-switch-over waits for a proceed of its own")
            }
        }
    }
}
