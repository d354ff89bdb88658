import ArgumentParser
import Foundation
import JSONRendering
import Mapping
import ObjectModel

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Load and validate every version of a model; one line per problem."
    )

    @OptionGroup var modelOptions: ModelOptions
    @OptionGroup var formatOptions: FormatOptions

    @OptionGroup var mappingOptions: MappingOptions

    func run() throws {
        try reportingFailures {
            let model = try modelOptions.loadEachVersion()
            // Every version, in order: what kept it from loading, else what validation finds.
            let results = model.versionNames.map { name in
                (name, model.unusableVersion(named: name)?.issues ?? ModelValidator.validate(model.version(named: name)!))
            }
            // Mapping models are checked against the versions that passed.
            let usable = model.settingAside(issuesByVersion: Dictionary(uniqueKeysWithValues: results))
            let found = try mappingOptions.find(for: model)
            let mappingResults = found.mappingModels.map { ($0, MappingModelValidator.validate($0, model: usable)) }
            let warnings = model.warnings.map(\.description) + model.versions.flatMap(ModelValidator.warnings).map(\.description)
                + found.warnings.map(\.description)
            let problemCount = results.reduce(0) { $0 + $1.1.count } + mappingResults.reduce(0) { $0 + $1.1.count }
            switch formatOptions.format {
            case .json:
                printLine(JSONValue.object([
                    ("model", .string(model.name)),
                    ("path", .string(model.path)),
                    ("currentVersion", .string(model.currentVersionName)),
                    ("valid", .bool(problemCount == 0)),
                    ("versions", .array(results.map { name, issues in
                        .object([
                            ("name", .string(name)),
                            ("valid", .bool(issues.isEmpty)),
                            ("problems", .array(issues.map { .string($0.description) })),
                        ])
                    })),
                    ("mappingModels", .array(mappingResults.map { mapping, issues in
                        .object([
                            ("file", .string(mapping.file)),
                            ("source", .string(mapping.source)),
                            ("destination", .string(mapping.destination)),
                            ("entityMappings", .number(mapping.entityMappings.count)),
                            ("valid", .bool(issues.isEmpty)),
                            ("problems", .array(issues.map { .string($0.description) })),
                        ])
                    })),
                    ("warnings", .array(warnings.map(JSONValue.string))),
                ]).rendered)
            case .text:
                for warning in warnings { printLine("warning: \(warning)") }
                for (_, issues) in results {
                    for issue in issues { printLine("error: \(issue)") }
                }
                for (mapping, issues) in mappingResults {
                    printLine("mapping model \(mapping.file): '\(mapping.source)' -> '\(mapping.destination)', \(mapping.entityMappings.count) entity mapping(s): " + (issues.isEmpty ? "valid" : "\(issues.count) problem(s)"))
                    for issue in issues { printLine("error: \(issue)") }
                }
                printLine("\(model.name): \(model.versionNames.count) version(s), current '\(model.currentVersionName)': " +
                    (problemCount == 0 ? "valid" : "\(problemCount) problem(s)"))
            }
            if problemCount > 0 { throw ExitCode.failure }
        }
    }
}
