import ArgumentParser
import Engine
import Foundation
import JSONRendering
import ObjectModel
import PostgresClient

/// What `fleet complete` and `fleet rollback` share: each ends the two versions of every store
/// of the fleet that serves them (`fleet apply --expand`), server by server, one connection per
/// server, one store after another; a store that fails does not stop the others.
struct FleetExpansionEnd<Report> {
    struct Outcome {
        var store: FleetStore
        var report: Report?
        var error: String?
    }

    var fleet: FleetFile
    var outcomes: [Outcome] = []
    var unreachable: [FleetStoreState] = []

    /// `end` completes or rolls back one store on its server's connection, given the fleet's
    /// model. With `unfinished`, also the stores whose `apply --expand` stopped before its
    /// switch-over (`fleet rollback`, which undoes them with the model).
    init(options: FleetOptions, unfinished: Bool = false, end: (PostgresConnection, String, VersionedModel) throws -> Report) throws {
        let (fleet, model, target) = try options.load()
        self.fleet = fleet
        let states = FleetSurvey.states(of: fleet, model: model, target: target) { try fleetConnect($0.connectionString) }
        let expanded = states.filter { $0.expansion != nil || (unfinished && $0.unfinishedExpand) }
        unreachable = states.filter { $0.status == .unreachable }
        for server in fleet.servers {
            let own = expanded.filter { $0.store.server == server.name }
            guard !own.isEmpty else { continue }
            do {
                let connection = try fleetConnect(server.connectionString)
                defer { connection.close() }
                for state in own {
                    do {
                        outcomes.append(Outcome(store: state.store, report: try end(connection, state.store.store, model)))
                    } catch {
                        outcomes.append(Outcome(store: state.store, error: String(describing: error)))
                    }
                }
            } catch {
                outcomes += own.map { Outcome(store: $0.store, error: "server \(server.name) was not reached: \(error)") }
            }
        }
    }

    /// The outcomes: JSON `{fleet, stores: [{server, store, …fields, error}], unreachable}`, or
    /// per store `text`'s lines (`failed: …` when it failed), then the servers not reached.
    func print(
        format: OutputFormat, nothing: String, fields: (Outcome) -> [(String, JSONValue)], text: (FleetStore, Report) -> [String]
    ) {
        switch format {
        case .json:
            let stores = outcomes.map { outcome in
                JSONValue.object([("server", .string(outcome.store.server)), ("store", .string(outcome.store.store))]
                    + fields(outcome) + [("error", outcome.error.map(JSONValue.string) ?? .null)])
            }
            printLine(JSONValue.object([
                ("fleet", .string(fleet.path)), ("stores", .array(stores)),
                ("unreachable", .array(unreachable.map { .string($0.store.description) })),
            ]).rendered)
        case .text:
            if outcomes.isEmpty { printLine("fleet \(fleet.path): no store serves two versions; nothing to \(nothing)") }
            for outcome in outcomes {
                if let report = outcome.report {
                    text(outcome.store, report).forEach { printLine($0) }
                } else {
                    printLine("\(outcome.store): failed: \(outcome.error ?? "")")
                }
            }
            for state in unreachable { printLine("\(state.store): unreachable: \(state.detail ?? "")") }
        }
    }

    /// Exit 1 naming the stores not ended (failed or not reached), `verb` being what was not done.
    func requireAllEnded(verb: String, command: String) throws {
        let failed = outcomes.filter { $0.error != nil }.map(\.store) + unreachable.map(\.store)
        guard failed.isEmpty else {
            printError("\(failed.count) store\(failed.count == 1 ? "" : "s") not \(verb): \(failed.prefix(10).map(\.description).joined(separator: ", ")); run \(command) again")
            throw ExitCode.failure
        }
    }
}
