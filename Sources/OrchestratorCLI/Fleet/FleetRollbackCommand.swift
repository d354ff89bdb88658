import ArgumentParser
import Engine
import JSONRendering

/// `orchestrator fleet rollback`: `rollback` on every store of the fleet that serves two
/// versions (`fleet apply --expand`), server by server, one connection per server.
struct FleetRollbackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollback",
        abstract: "Undo `fleet apply --expand` on every store serving two versions, or stopped before its switch-over: each store back at the previous version.",
        discussion: """
            Each store is rolled back as `orchestrator rollback` rolls it back: under its advisory \
            lock, in one bounded transaction, keeping every row and value the previous version \
            can hold. A store whose rollback would drop rows or values fails, naming each loss \
            with its code and nothing changed, unless --allow-data-loss; a store whose tables or \
            views are in use fails unless --force. A store that fails does not stop the others. \
            Exit 0 when every such store was rolled back (or none served two versions), else 1, \
            naming the stores. A store whose lightweight apply --expand stopped before its \
            switch-over is undone with the fleet's model, as rollback --model undoes it \
            (docs/rolling-deploys-unfinished.md). See docs/rolling-deploys.md.
            """
    )

    @OptionGroup var options: FleetOptions

    @OptionGroup var lockOptions: ExpansionLockOptions

    @OptionGroup var flags: RollbackFlags

    func run() throws {
        try reportingFailures {
            let applyOptions = lockOptions.applyOptions
            let run = try FleetExpansionEnd(options: options, unfinished: true) { connection, store, model in
                try ExpansionRollback(connection: connection, store: store, model: model)
                    .rollBack(dryRun: flags.dryRun, allowDataLoss: flags.allowDataLoss, force: flags.force, options: applyOptions)
            }
            run.print(format: options.format, nothing: "roll back") { outcome in
                [
                    ("outcome", .string(outcome.error != nil ? "failed" : flags.dryRun ? "dryRun" : "rolledBack")),
                    ("rollback", outcome.report.map(RollbackRendering.json) ?? .null),
                ]
            } text: { store, report in
                ["\(store):"] + RollbackRendering.text(report).map { "  \($0)" }
            }
            try run.requireAllEnded(verb: flags.dryRun ? "planned" : "rolled back", command: "fleet rollback")
        }
    }
}
