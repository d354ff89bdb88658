import ArgumentParser
import Engine
import Foundation

struct FleetStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Every store's version, status and drift, read with one catalog pass per server.",
        discussion: """
            Statuses: upToDate, migrationRequired, missing, drifted, unknownVersion,
            inProgress, unreachable. With --check the exit code is the answer: 0 every store
            is up to date, 2 some need a migration (or do not exist, or are being migrated),
            1 any store drifted, is of an unknown version or is on a server not reached.
            """
    )

    @OptionGroup var options: FleetOptions

    @Flag(name: .long, help: "Exit 0 when every store is up to date, 2 when some need a migration, 1 on drift, an unknown version or an unreachable server.")
    var check = false

    func run() throws {
        try reportingFailures {
            let (fleet, model, target) = try options.load()
            let states = FleetSurvey.states(of: fleet, model: model, target: target) { try fleetConnect($0.connectionString) }
            let summary = FleetSummary(states: states, fleet: fleet, target: target.name)
            switch options.format {
            case .json: printLine(summary.json(model: model.name).rendered)
            case .text: summary.textLines.forEach { printLine($0) }
            }
            if check, let code = summary.checkExitCode, code != 0 { throw ExitCode(code) }
        }
    }
}
