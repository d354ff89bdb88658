import ArgumentParser
import JSONRendering
import ObjectModel

struct HashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash",
        abstract: "Print the version hashes of every version (or one) of a model."
    )

    @OptionGroup var modelOptions: ModelOptions
    @OptionGroup var formatOptions: FormatOptions

    @Option(name: .long, help: "Only this version.")
    var version: String?

    func run() throws {
        try reportingFailures {
            let model = try modelOptions.loadEachVersion()
            try modelOptions.checkVersion(version, in: model)
            // A version that fails validation has no hash a store could have been made with.
            try model.requireUsable(version.map { [$0] } ?? model.versionNames)
            let versions = version.flatMap { model.version(named: $0) }.map { [$0] } ?? model.versions
            let hashed = versions.map { ($0.name, VersionHash.hashes(of: $0)) }
            switch formatOptions.format {
            case .json:
                printLine(JSONValue.object([
                    ("versions", .array(hashed.map { name, hashes in
                        .object([
                            ("name", .string(name)),
                            ("modelHash", .string(hashes.model)),
                            ("entities", .object(hashes.entities.keys.sorted().map { ($0, .string(hashes.entities[$0]!)) })),
                        ])
                    })),
                ]).rendered)
            case .text:
                for (name, hashes) in hashed {
                    printLine("\(name)\(name == model.currentVersionName ? " (current)" : "")  \(hashes.model)")
                    for entity in hashes.entities.keys.sorted() {
                        printLine("  \(entity)  \(hashes.entities[entity]!)")
                    }
                }
            }
        }
    }
}
