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
            let (fleet, model, target) = try options.load()
            let states = FleetSurvey.states(of: fleet, model: model, target: target) { try fleetConnect($0.connectionString) }
            let expanded = states.filter { $0.expansion != nil }
            let unreachable = states.filter { $0.status == .unreachable }
            let applyOptions = lockOptions.applyOptions
            var outcomes: [(store: FleetStore, report: CompletionReport?, error: String?)] = []
            for server in fleet.servers {
                let own = expanded.filter { $0.store.server == server.name }
                guard !own.isEmpty else { continue }
                do {
                    let connection = try fleetConnect(server.connectionString)
                    defer { connection.close() }
                    for state in own {
                        do {
                            let report = try ExpansionCompletion(connection: connection, store: state.store.store).complete(force: force, options: applyOptions)
                            outcomes.append((state.store, report, nil))
                        } catch {
                            outcomes.append((state.store, nil, String(describing: error)))
                        }
                    }
                } catch {
                    outcomes += own.map { ($0.store, nil, "server \(server.name) was not reached: \(error)") }
                }
            }
            let failed = outcomes.filter { $0.error != nil }
            switch options.format {
            case .json:
                let stores = outcomes.map { outcome in
                    JSONValue.object([
                        ("server", .string(outcome.store.server)), ("store", .string(outcome.store.store)),
                        ("outcome", .string(outcome.error == nil ? "completed" : "failed")),
                        ("oldVersion", outcome.report.map { .string($0.oldVersion) } ?? .null),
                        ("newVersion", outcome.report.map { .string($0.newVersion) } ?? .null),
                        ("endedSessions", .number(outcome.report?.endedSessions.count ?? 0)),
                        ("error", outcome.error.map(JSONValue.string) ?? .null),
                    ])
                }
                printLine(JSONValue.object([
                    ("fleet", .string(fleet.path)), ("stores", .array(stores)),
                    ("unreachable", .array(unreachable.map { .string($0.store.description) })),
                ]).rendered)
            case .text:
                if outcomes.isEmpty { printLine("fleet \(fleet.path): no store serves two versions; nothing to complete") }
                for outcome in outcomes {
                    if let report = outcome.report {
                        printLine("\(outcome.store): completed ('\(report.oldVersion)' no longer served; \(report.statements.count) statement\(report.statements.count == 1 ? "" : "s"), \(report.durationMilliseconds) ms)")
                    } else {
                        printLine("\(outcome.store): failed: \(outcome.error ?? "")")
                    }
                }
                for state in unreachable { printLine("\(state.store): unreachable: \(state.detail ?? "")") }
            }
            guard failed.isEmpty && unreachable.isEmpty else {
                let named = (failed.map(\.store) + unreachable.map(\.store)).prefix(10).map(\.description).joined(separator: ", ")
                printError("\(failed.count + unreachable.count) store\(failed.count + unreachable.count == 1 ? "" : "s") not completed: \(named); run fleet complete again")
                throw ExitCode.failure
            }
        }
    }
}
