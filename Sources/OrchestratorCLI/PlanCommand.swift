import ArgumentParser
import Engine
import ObjectModel
import Planning

struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show what `apply` would run: every step and statement, with its lock and hazards."
    )

    @OptionGroup var modelOptions: ModelOptions
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var formatOptions: FormatOptions
    @OptionGroup var mappingOptions: MappingOptions
    @OptionGroup var heavyweightOptions: HeavyweightOptions

    @Option(name: .long, help: "Plan to this version instead of the current one.")
    var to: String?

    @Flag(name: .long, help: "Show how `apply --online` would run each step: its phases, the lock each takes and how long it holds it.")
    var online = false

    func run() throws {
        try reportingFailures {
            let model = try modelOptions.loadEachVersion()
            try modelOptions.checkVersion(to, in: model)
            try model.requireUsable([to ?? model.currentVersionName])
            let explicitMappings = try mappingOptions.explicitMappings(for: model)
            let url = try storeOptions.resolvedDatabaseURL()
            let connection = try connect(url)
            defer { connection.close() }
            let migrator = heavyweightOptions.migrator(
                connection: connection, model: model, store: storeOptions.storeName(for: model), targetVersion: to, explicitMappings: explicitMappings
            )
            let plan = try migrator.plan()
            switch formatOptions.format {
            case .json: printLine((online ? OnlinePlanRendering.json(plan) : PlanRendering.json(plan)).rendered)
            case .text:
                PlanRendering.text(plan).forEach { printLine($0) }
                if online { OnlinePlanRendering.text(plan).forEach { printLine($0) } }
            }
        }
    }
}
