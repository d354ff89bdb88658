import ArgumentParser
import Engine
import Foundation
import JSONRendering

/// `orchestrator fleet complete`: `complete` on every store of the fleet that serves two
/// versions (`fleet apply --expand`), server by server, one connection per server.
struct FleetCompleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "complete",
        abstract: "Finish `fleet apply --expand` on every store serving two versions: drop the previous version's views and run the deferred changes.",
        discussion: """
            Each store is completed as `orchestrator complete` completes it: under its advisory
            lock, in one bounded transaction; refused, with nothing changed, while sessions use
            the previous version's views, unless --force. A store that fails does not stop the
            others. Exit 0 when every such store was completed (or none served two versions),
            else 1, naming the stores. See docs/rolling-deploys.md.
            """
    )

    @OptionGroup var options: FleetOptions

    @OptionGroup var lockOptions: ExpansionLockOptions

    @Flag(name: .long, help: "End the sessions still using a store's previous version's views (pg_terminate_backend), then complete it.")
    var force = false

    func run() throws {
        try reportingFailures {
            let applyOptions = lockOptions.applyOptions
            let run = try FleetExpansionEnd(options: options) { connection, store, _ in
                try ExpansionCompletion(connection: connection, store: store).complete(force: force, options: applyOptions)
            }
            run.print(format: options.format, nothing: "complete") { outcome in
                [
                    ("outcome", .string(outcome.error == nil ? "completed" : "failed")),
                    ("oldVersion", outcome.report.map { .string($0.oldVersion) } ?? .null),
                    ("newVersion", outcome.report.map { .string($0.newVersion) } ?? .null),
                    ("endedSessions", .number(outcome.report?.endedSessions.count ?? 0)),
                ]
            } text: { store, report in
                ["\(store): completed ('\(report.oldVersion)' no longer served; \(report.statements.count) statement\(report.statements.count == 1 ? "" : "s"), \(report.durationMilliseconds) ms)"]
            }
            try run.requireAllEnded(verb: "completed", command: "fleet complete")
        }
    }
}
