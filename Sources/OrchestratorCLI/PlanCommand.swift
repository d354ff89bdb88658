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
            case .json: printLine(PlanRendering.json(plan).rendered)
            case .text: PlanRendering.text(plan).forEach { printLine($0) }
            }
        }
    }
}
