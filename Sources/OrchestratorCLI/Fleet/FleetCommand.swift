import ArgumentParser
import Engine
import Foundation
import ObjectModel
import PostgresClient

/// `orchestrator fleet`: every store on every server of a fleet file (docs/fleets.md).
struct FleetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Status, plan and apply over every store on every server of a fleet file (docs/fleets.md).",
        subcommands: [FleetStatusCommand.self, FleetPlanCommand.self, FleetApplyCommand.self, FleetCompleteCommand.self, FleetRollbackCommand.self]
    )
}

/// What the three fleet commands share: the fleet file, the model (from the file unless
/// `--model`), the target version and the output format.
struct FleetOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The fleet file (YAML): model, journal, servers, waves, perServerJobs, stopAfterFailures.", valueName: "file"))
    var fleet: String

    @Option(name: .long, help: "A versioned-model folder or an .xcdatamodeld package (default: the fleet file's model).")
    var model: String?

    @Option(name: .long, help: "Bring the stores to this version instead of the current one.")
    var to: String?

    @Option(name: .long, help: "Output format: text or json.")
    var format: OutputFormat = .text

    @OptionGroup var outputOptions: OutputOptions

    /// The fleet file, the model read once, and the target version, checked usable.
    func load() throws -> (FleetFile, VersionedModel, ModelVersion) {
        let file = try FleetFile.load(path: fleet)
        guard let path = model ?? file.model else {
            throw ValidationError("\(fleet) names no model: give --model or a model key in the file")
        }
        let versioned = try ModelLoader.loadEachVersion(path: path)
        let name = to ?? versioned.currentVersionName
        guard versioned.versionNames.contains(name) else {
            throw ValidationError("no version named '\(name)' in \(versioned.path) (versions: \(versioned.versionNames.joined(separator: ", ")))")
        }
        try versioned.requireUsable([name])
        guard let target = versioned.version(named: name) else { throw ValidationError("version '\(name)' of \(versioned.path) cannot be used") }
        return (file, versioned, target)
    }
}

/// Opens a connection for the fleet commands: as `connect`, with `--verbose`'s log and no lock
/// waited for longer than `apply`'s default `--lock-wait`; the error names the server by its
/// redacted address.
@Sendable func fleetConnect(_ url: String) throws -> PostgresConnection {
    try connect(url, lockWait: ApplyOptions.defaultLockWaitSeconds)
}
