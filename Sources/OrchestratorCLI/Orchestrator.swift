import ArgumentParser

/// The `orchestrator` command. Users with custom needs build their own executable around it.
public struct Orchestrator: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "orchestrator",
        abstract: "Core Data model versioning and migration for PostgreSQL.",
        discussion: """
            A store is a PostgreSQL schema holding the data of one version of a
            model. `plan` tells whether a store matches the current version and
            what `apply` would run; `apply` runs exactly that. `orchestrator
            --version` prints the tool's version and the metadata layout version
            it writes.

            EXIT CODES
              0   success (`status`: the report was produced, compatible or not)
              1   failure: bad model, unreachable or silent database, a connection
                  string that cannot be read safely (it is not shown), store of an
                  unknown version, a store another apply holds past --lock-wait, a
                  plan that cannot run, a failed step, a store that lacks or changed
                  objects of its version's contract (`plan`, `apply`), a restore
                  without a backup, a schema `adopt` finds different
              2   `status --check` only: a migration is needed or the store does
                  not exist (1 when it differs from its version's contract)
              64  bad usage: unknown option or version
            """,
        subcommands: [
            StatusCommand.self, PlanCommand.self, ApplyCommand.self, InferCommand.self, HashCommand.self, ValidateCommand.self, DiagramCommand.self,
            HistoryCommand.self,
            RestoreCommand.self,
            AdoptCommand.self,
            FleetCommand.self,
            ControlCommand.self,
            CompleteCommand.self,
            RollbackCommand.self,
        ]
    )

    public init() {}

    /// `orchestrator --version` prints the tool's version and the metadata layout version it
    /// writes. Not ArgumentParser's `version:` nor a flag of this command: either answers
    /// `--version` after a subcommand too, and `adopt --version NAME` is adopt's own option.
    public static func main() {
        if CommandLine.arguments.dropFirst().first == "--version" {
            print(ToolVersion.line)
            return
        }
        main(nil)
    }
}
