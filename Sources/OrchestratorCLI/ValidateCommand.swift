import ArgumentParser
import Foundation
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
            let model = try modelOptions.load()
            let results = model.versions.map { ($0.name, ModelValidator.validate($0)) }
            let warnings = model.warnings + model.versions.flatMap(ModelValidator.warnings)
            let mappingResults = try mappingOptions.load(for: model).map { ($0, MappingModelValidator.validate($0, model: model)) }
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
                    ("warnings", .array(warnings.map { .string($0.description) })),
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
                printLine("\(model.name): \(model.versions.count) version(s), current '\(model.currentVersionName)': " +
                    (problemCount == 0 ? "valid" : "\(problemCount) problem(s)"))
            }
            if problemCount > 0 { throw ExitCode.failure }
        }
    }
}
