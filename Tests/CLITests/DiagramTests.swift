import Foundation
import Testing

/// Issue 11.9: `orchestrator diagram` draws a version, or what a migration changes, in Mermaid
/// and DOT. The outputs are pinned in full for a small model.
@Suite("Diagrams")
struct DiagramTests {
    @Test("one version in Mermaid: entities, attributes with types, relationships with cardinality, inheritance")
    func mermaidOfOneVersion() throws {
        try withZooModel { model in
            let result = try OrchestratorBinary.run(["diagram", "--model", model, "--version", "Zoo 1"])
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stderr.isEmpty, "\(result)")
            #expect(result.stdout == #"""
                classDiagram
                    %% Zoo 1
                    class Animal {
                        <<abstract>>
                        string name
                        int16? legs
                    }
                    class Bird {
                        float? wingspan
                    }
                    class Keeper {
                        string name
                        string? badge
                    }
                    class Visitor {
                        uuid? ticket
                    }
                    Animal <|-- Bird
                    Animal "0..*" -- "0..1" Keeper : keeper / animals
                    Visitor --> "0..1" Animal : favourite

                """#, "\(result)")
        }
    }

    @Test("one version in DOT")
    func dotOfOneVersion() throws {
        try withZooModel { model in
            let result = try OrchestratorBinary.run(["diagram", "--model", model, "--version", "Zoo 1", "--format", "dot"])
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stdout == #"""
                digraph "Zoo 1" {
                    graph [rankdir=LR, fontname="Helvetica"];
                    node [shape=record, fontname="Helvetica", fontsize=10];
                    edge [fontname="Helvetica", fontsize=9];
                    "Animal" [label="Animal\n«abstract»|string name\lint16? legs\l"];
                    "Bird" [label="Bird|float? wingspan\l"];
                    "Keeper" [label="Keeper|string name\lstring? badge\l"];
                    "Visitor" [label="Visitor|uuid? ticket\l"];
                    "Bird" -> "Animal" [arrowhead=empty];
                    "Animal" -> "Keeper" [dir=none, label="keeper / animals", headlabel="0..1", taillabel="0..*"];
                    "Visitor" -> "Animal" [arrowhead=vee, label="favourite", headlabel="0..1"];
                }

                """#, "\(result)")
        }
    }

    @Test("--from --to marks what the migration adds, removes, renames and changes, in Mermaid")
    func mermaidOfMigration() throws {
        try withZooModel { model in
            let result = try OrchestratorBinary.run(["diagram", "--model", model, "--from", "Zoo 1", "--to", "Zoo 2"])
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stdout == #"""
                classDiagram
                    %% Zoo 1 → Zoo 2
                    class Animal {
                        <<abstract>>
                        string name
                        int32 legs «int16 → int32, made required, default changed»
                    }
                    class Bird {
                        float? span «renamed from wingspan»
                    }
                    class Caretaker {
                        <<renamed from Keeper>>
                        string name
                        string? badge «removed»
                    }
                    class Enclosure {
                        <<added>>
                        string code «added»
                    }
                    class Visitor {
                        <<removed>>
                        uuid? ticket
                    }
                    Animal <|-- Bird
                    Animal "0..*" -- "0..1" Caretaker : keeper / animals
                    Animal "1..20" -- "0..1" Enclosure : enclosure / animals «added»
                    Visitor --> "0..1" Animal : favourite «removed»
                    style Caretaker fill:#fff3cd,stroke:#b26a00
                    style Enclosure fill:#d9f2d9,stroke:#2e7d32
                    style Visitor fill:#f8d7da,stroke:#c62828

                """#, "\(result)")
        }
    }

    @Test("--from --to in DOT colors the marks")
    func dotOfMigration() throws {
        try withZooModel { model in
            let result = try OrchestratorBinary.run(["diagram", "--model", model, "--from", "Zoo 1", "--to", "Zoo 2", "--format", "dot"])
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stdout == #"""
                digraph "Zoo 1 → Zoo 2" {
                    graph [rankdir=LR, fontname="Helvetica"];
                    node [shape=record, fontname="Helvetica", fontsize=10];
                    edge [fontname="Helvetica", fontsize=9];
                    "Animal" [label="Animal\n«abstract»|string name\lint32 legs «int16 → int32, made required, default changed»\l"];
                    "Bird" [label="Bird|float? span «renamed from wingspan»\l"];
                    "Caretaker" [label="Caretaker\n«renamed from Keeper»|string name\lstring? badge «removed»\l", color="#b26a00", fontcolor="#b26a00"];
                    "Enclosure" [label="Enclosure\n«added»|string code «added»\l", color="#2e7d32", fontcolor="#2e7d32"];
                    "Visitor" [label="Visitor\n«removed»|uuid? ticket\l", color="#c62828", fontcolor="#c62828", style=dashed];
                    "Bird" -> "Animal" [arrowhead=empty];
                    "Animal" -> "Caretaker" [dir=none, label="keeper / animals", headlabel="0..1", taillabel="0..*"];
                    "Animal" -> "Enclosure" [dir=none, label="enclosure / animals «added»", headlabel="0..1", taillabel="1..20", color="#2e7d32", fontcolor="#2e7d32"];
                    "Visitor" -> "Animal" [arrowhead=vee, label="favourite «removed»", headlabel="0..1", color="#c62828", fontcolor="#c62828", style=dashed];
                }

                """#, "\(result)")
        }
    }

    @Test("without --version, the current version is drawn")
    func currentVersionByDefault() throws {
        try withZooModel { model in
            let current = try OrchestratorBinary.run(["diagram", "--model", model])
            let named = try OrchestratorBinary.run(["diagram", "--model", model, "--version", "Zoo 2"])
            #expect(current.exitCode == 0 && current.stdout == named.stdout, "\(current)\n\(named)")
            #expect(current.stdoutLines.prefix(2) == ["classDiagram", "    %% Zoo 2"], "\(current)")
        }
    }

    @Test("an unknown version, a lone --from, or --version with --from are usage errors (exit 64) naming the problem")
    func badInput() throws {
        try withZooModel { model in
            let unknown = try OrchestratorBinary.run(["diagram", "--model", model, "--version", "Zoo 9"])
            #expect(unknown.exitCode == 64, "\(unknown)")
            #expect(unknown.stderr == "error: no version named 'Zoo 9' in \(model) (versions: Zoo 1, Zoo 2)\n", "\(unknown)")
            #expect(unknown.stdout.isEmpty, "\(unknown)")
            let unknownTo = try OrchestratorBinary.run(["diagram", "--model", model, "--from", "Zoo 1", "--to", "Zoo 3"])
            #expect(unknownTo.exitCode == 64, "\(unknownTo)")
            #expect(unknownTo.stderr.contains("no version named 'Zoo 3'"), "\(unknownTo)")
            let lone = try OrchestratorBinary.run(["diagram", "--model", model, "--from", "Zoo 1"])
            #expect(lone.exitCode == 64, "\(lone)")
            #expect(lone.stderr.contains("--from and --to go together"), "\(lone)")
            let both = try OrchestratorBinary.run(["diagram", "--model", model, "--version", "Zoo 1", "--from", "Zoo 1", "--to", "Zoo 2"])
            #expect(both.exitCode == 64, "\(both)")
            let format = try OrchestratorBinary.run(["diagram", "--model", model, "--format", "svg"])
            #expect(format.exitCode == 64, "\(format)")
        }
    }

    @Test("docs/diagrams.md holds the diagrams the tool draws of the repository's Recipes model")
    func documentedDiagramsAreCurrent() throws {
        let page = try String(contentsOf: OrchestratorBinary.repository.appendingPathComponent("docs/diagrams.md"), encoding: .utf8)
        for arguments in [["--version", "Recipes 3"], ["--from", "Recipes 1", "--to", "Recipes 3"]] {
            let result = try OrchestratorBinary.run(["diagram", "--model", "migrations"] + arguments)
            #expect(result.exitCode == 0, "\(result)")
            #expect(page.contains("```mermaid\n" + result.stdout + "```\n"), "docs/diagrams.md is out of date for \(arguments): \(result.stdout)")
        }
    }
}

/// Zoo 1 -> Zoo 2: Keeper renamed Caretaker (renaming identifier) and loses badge; Animal.legs
/// widened to int32 and made required with a default; Bird.wingspan renamed span; Enclosure
/// added with a relationship to Animal and its inverse; Visitor, with a relationship without
/// inverse, removed. Animal is abstract, Bird its sub-entity; Keeper.mood is transient.
private func withZooModel(_ body: (String) throws -> Void) throws {
    try withTemporaryFolder { folder in
        let model = folder.appendingPathComponent("Zoo")
        try write("name: Zoo\nversions: [Zoo 1, Zoo 2]\n", to: "model.yaml", in: model)
        try write("""
            entities:
              Animal:
                abstract: true
                attributes:
                  name: {type: string, optional: false}
                  legs: int16
                relationships:
                  keeper: {destination: Keeper, inverse: animals}
              Bird:
                parent: Animal
                attributes:
                  wingspan: float
              Keeper:
                attributes:
                  name: {type: string, optional: false}
                  badge: string
                  mood: {type: string, transient: true}
                relationships:
                  animals: {destination: Animal, inverse: keeper, toMany: true, deleteRule: cascade}
              Visitor:
                attributes:
                  ticket: uuid
                relationships:
                  favourite: {destination: Animal}
            """, to: "Zoo 1.yaml", in: model)
        try write("""
            entities:
              Animal:
                abstract: true
                attributes:
                  name: {type: string, optional: false}
                  legs: {type: int32, optional: false, default: 4}
                relationships:
                  keeper: {destination: Caretaker, inverse: animals}
                  enclosure: {destination: Enclosure, inverse: animals}
              Bird:
                parent: Animal
                attributes:
                  span: {type: float, renamingIdentifier: wingspan}
              Caretaker:
                renamingIdentifier: Keeper
                attributes:
                  name: {type: string, optional: false}
                relationships:
                  animals: {destination: Animal, inverse: keeper, toMany: true, deleteRule: cascade}
              Enclosure:
                attributes:
                  code: {type: string, optional: false}
                relationships:
                  animals: {destination: Animal, inverse: enclosure, toMany: true, minCount: 1, maxCount: 20, optional: false}
            """, to: "Zoo 2.yaml", in: model)
        try body(model.path)
    }
}
