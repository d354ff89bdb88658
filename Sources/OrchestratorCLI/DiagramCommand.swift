import ArgumentParser
import ObjectModel
import Planning

enum DiagramFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
    case mermaid
    case dot
}

struct DiagramCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diagram",
        abstract: "Draw a model version, or what a migration changes, as a Mermaid or Graphviz DOT diagram.",
        discussion: """
            Entities with their stored attributes (`string? name`: optional), relationships with
            their cardinality (0..1, 1, 0..*, 1..*), inheritance. With --from A --to B: version B,
            plus what A had and B dropped, each element marked «added», «removed», «renamed from
            …» or with what changed, matched as the inference engine matches them.
            """
    )

    @OptionGroup var modelOptions: ModelOptions

    @Option(name: .long, help: "The version to draw (default: the current version).")
    var version: String?

    @Option(name: .long, help: "With --to: draw the migration from this version.")
    var from: String?

    @Option(name: .long, help: "With --from: draw the migration to this version.")
    var to: String?

    @Option(name: .long, help: "Output format: mermaid (renders on GitHub in a ```mermaid block) or dot (Graphviz).")
    var format: DiagramFormat = .mermaid

    func validate() throws {
        guard (from == nil) == (to == nil) else { throw ValidationError("--from and --to go together") }
        if version != nil, from != nil { throw ValidationError("--version draws one version; --from and --to draw a migration: give one or the other") }
    }

    func run() throws {
        try reportingFailures {
            let diagram = try diagram(of: try modelOptions.loadEachVersion())
            let lines = switch format {
            case .mermaid: DiagramRendering.mermaid(diagram)
            case .dot: DiagramRendering.dot(diagram)
            }
            lines.forEach { printLine($0) }
        }
    }

    /// The versions named must exist (a usage error) and be usable; no other version matters.
    func diagram(of model: VersionedModel) throws -> ModelDiagram {
        if let from, let to {
            try modelOptions.checkVersion(from, in: model)
            try modelOptions.checkVersion(to, in: model)
            try model.requireUsable([from, to])
            return ModelDiagram.migration(from: model.version(named: from)!, to: model.version(named: to)!)
        }
        try modelOptions.checkVersion(version, in: model)
        let name = version ?? model.currentVersionName
        try model.requireUsable([name])
        return ModelDiagram(version: model.version(named: name)!)
    }
}
