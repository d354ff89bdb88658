import ObjectModel
import Planning
import Testing

/// `ModelDiagram.migration(from:to:)` marks elements as the inference engine matches them; the
/// full rendered output is pinned by the CLI's Diagrams suite.
@Suite("Model diagram marks")
struct ModelDiagramTests {
    @Test("a property moved up to a new parent shows on the parent, moved from the child; the child shows nothing removed")
    func movedUp() {
        let source = ModelVersion(name: "1", entities: [
            Entity(name: "Book", attributes: [Attribute(name: "title", type: .string)]),
        ])
        let destination = ModelVersion(name: "2", entities: [
            Entity(name: "Item", isAbstract: true, attributes: [Attribute(name: "title", type: .string)]),
            Entity(name: "Book", parent: "Item"),
        ])
        let diagram = ModelDiagram.migration(from: source, to: destination)
        #expect(diagram.entities.map(\.name) == ["Item", "Book"])
        #expect(diagram.entities[0].mark == .added)
        #expect(diagram.entities[0].attributes.map(\.mark) == [.changed(["moved from Book"])])
        #expect(diagram.entities[1].attributes.isEmpty)
        #expect(diagram.entities[1].mark == .changed(["parent none → Item"]))
        #expect(diagram.inheritance.map { [$0.parent, $0.child, $0.mark.status.rawValue] } == [["Item", "Book", "added"]])
    }

    @Test("cardinality: optional and required to-one, to-many bounds, a required to-many needs one", arguments: [
        (Relationship(name: "r", destination: "B"), "0..1"),
        (Relationship(name: "r", destination: "B", isOptional: false), "1"),
        (Relationship(name: "r", destination: "B", isToMany: true), "0..*"),
        (Relationship(name: "r", destination: "B", isToMany: true, isOptional: false), "1..*"),
        (Relationship(name: "r", destination: "B", isToMany: true, minCount: 2, maxCount: 5), "2..5"),
    ])
    func cardinality(relationship: Relationship, expected: String) {
        let version = ModelVersion(name: "1", entities: [Entity(name: "A", relationships: [relationship]), Entity(name: "B")])
        #expect(ModelDiagram(version: version).relationships.map(\.cardinality) == [expected])
    }

    @Test("a relationship whose destination entity is renamed is unchanged; a delete rule change is named")
    func relationshipChanges() {
        let source = ModelVersion(name: "1", entities: [
            Entity(name: "A", relationships: [Relationship(name: "b", destination: "B", deleteRule: .nullify)]),
            Entity(name: "B"),
        ])
        let destination = ModelVersion(name: "2", entities: [
            Entity(name: "A", relationships: [Relationship(name: "b", destination: "C", deleteRule: .cascade)]),
            Entity(name: "C", renamingIdentifier: "B"),
        ])
        let diagram = ModelDiagram.migration(from: source, to: destination)
        #expect(diagram.relationships.map(\.to) == ["C"])
        #expect(diagram.relationships.map(\.mark) == [.changed(["delete rule Nullify → Cascade"])])
        #expect(diagram.entities.map(\.mark) == [.unchanged, .changed(["renamed from B"])])
    }
}
