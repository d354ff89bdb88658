import ArgumentParser
import ObjectModel
import Planning

struct InferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "infer",
        abstract: "Infer the lightweight mapping between two versions, or say why there is none.",
        discussion: "Exits 0 when the mapping is inferable, 1 when it is not."
    )

    @OptionGroup var modelOptions: ModelOptions
    @OptionGroup var formatOptions: FormatOptions

    @Option(name: .long, help: "The source version.")
    var from: String

    @Option(name: .long, help: "The destination version.")
    var to: String

    func run() throws {
        try reportingFailures {
            let result = try answer(in: try modelOptions.loadEachVersion())
            switch formatOptions.format {
            case .json: printLine(InferRendering.json(result, from: from, to: to).rendered)
            case .text: InferRendering.text(result, from: from, to: to).forEach { printLine($0) }
            }
            if !result.isInferable { throw ExitCode.failure }
        }
    }

    /// The answer for the two versions of the loaded model: both must exist (a usage error) and
    /// be usable; no other version matters.
    func answer(in model: VersionedModel) throws -> InferenceResult {
        try modelOptions.checkVersion(from, in: model)
        try modelOptions.checkVersion(to, in: model)
        try model.requireUsable([from, to])
        return MappingInference.infer(from: model.version(named: from)!, to: model.version(named: to)!)
    }
}
