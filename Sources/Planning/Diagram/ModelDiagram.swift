import ObjectModel

/// What `orchestrator diagram` draws: the entities of a model version with their stored
/// attributes, the relationships between them with their cardinality, and inheritance; for a
/// migration (`ModelDiagram.migration(from:to:)`), every element marked with what the migration
/// does to it. Pure: the renderers (Mermaid, DOT) only lay this value out.
public struct ModelDiagram: Sendable, Hashable {
    /// "Recipes 3", or "Recipes 1 → Recipes 3" for a migration.
    public var title: String
    public var entities: [DiagramEntity]
    public var relationships: [DiagramRelationship]
    public var inheritance: [DiagramInheritance]

    /// One version, nothing marked. Transient properties have no storage and are not drawn.
    public init(version: ModelVersion) {
        title = version.name
        entities = version.entities.map { entity in
            DiagramEntity(
                name: entity.name, isAbstract: entity.isAbstract,
                attributes: entity.attributes.filter { !$0.isTransient }.map { DiagramAttribute($0) }
            )
        }
        relationships = Self.pairingInverses(version.entities.flatMap { entity in
            entity.relationships.filter { !$0.isTransient }.map { RelationshipEnd(entity: entity.name, $0, mark: .unchanged) }
        })
        inheritance = version.entities.compactMap { entity in
            entity.parent.map { DiagramInheritance(parent: $0, child: entity.name, mark: .unchanged) }
        }
    }

    init(title: String, entities: [DiagramEntity], relationships: [DiagramRelationship], inheritance: [DiagramInheritance]) {
        self.title = title
        self.entities = entities
        self.relationships = relationships
        self.inheritance = inheritance
    }

    /// One line per relationship: an end and its inverse become one line when each names the
    /// other, in the order the first of them is declared.
    static func pairingInverses(_ ends: [RelationshipEnd]) -> [DiagramRelationship] {
        var drawn: Set<Int> = []
        var lines: [DiagramRelationship] = []
        for (index, end) in ends.enumerated() where !drawn.contains(index) {
            drawn.insert(index)
            let inverse = ends.indices.first { other in
                !drawn.contains(other) && ends[other].entity == end.destination && ends[other].name == end.inverse
                    && ends[other].destination == end.entity && ends[other].inverse == end.name
            }
            if let inverse { drawn.insert(inverse) }
            lines.append(DiagramRelationship(end, inverse: inverse.map { ends[$0] }))
        }
        return lines
    }
}

/// What a migration does to one element of a diagram.
public struct DiagramMark: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable {
        case unchanged, added, removed, changed
    }

    public var status: Status
    /// For `changed`: "renamed from instructions", "int16 → int32", "made required", …
    public var notes: [String]

    public static let unchanged = DiagramMark(status: .unchanged, notes: [])
    public static let added = DiagramMark(status: .added, notes: [])
    public static let removed = DiagramMark(status: .removed, notes: [])

    /// `changed` with the notes, or `unchanged` when there are none.
    public static func changed(_ notes: [String]) -> DiagramMark {
        notes.isEmpty ? .unchanged : DiagramMark(status: .changed, notes: notes)
    }

    /// What a diagram writes beside the element: "added", "removed", or the notes.
    public var words: [String] {
        switch status {
        case .unchanged: []
        case .added: ["added"]
        case .removed: ["removed"]
        case .changed: notes
        }
    }
}

public struct DiagramEntity: Sendable, Hashable {
    public var name: String
    public var isAbstract: Bool
    public var attributes: [DiagramAttribute]
    public var mark = DiagramMark.unchanged
}

public struct DiagramAttribute: Sendable, Hashable {
    public var name: String
    /// The native type name: `string`, `int16`, `date`, …
    public var type: String
    public var isOptional: Bool
    public var mark = DiagramMark.unchanged

    init(_ attribute: Attribute, mark: DiagramMark = .unchanged) {
        name = attribute.name
        type = attribute.type.nativeName
        isOptional = attribute.isOptional
        self.mark = mark
    }
}

/// A relationship, with its inverse when the two name each other. Cardinalities are UML's:
/// `0..1`, `1`, `0..*`, `1..*`, `2..5`. `cardinality` is how many `to` objects one `from`
/// object links to (the `name` end); `inverseCardinality` the other way round.
public struct DiagramRelationship: Sendable, Hashable {
    public var from: String
    public var to: String
    public var name: String
    public var cardinality: String
    public var inverseName: String?
    public var inverseCardinality: String?
    /// For a pair: one mark when both ends have the same, else each end's words prefixed by its name.
    public var mark: DiagramMark

    init(_ end: RelationshipEnd, inverse: RelationshipEnd?) {
        from = end.entity
        to = end.destination
        name = end.name
        cardinality = end.cardinality
        inverseName = inverse?.name
        inverseCardinality = inverse?.cardinality
        guard let inverse, inverse.mark != end.mark else {
            mark = end.mark
            return
        }
        let notes = [end, inverse].flatMap { side in side.mark.words.map { "\(side.name) \($0)" } }
        mark = .changed(notes)
    }
}

public struct DiagramInheritance: Sendable, Hashable {
    public var parent: String
    public var child: String
    public var mark: DiagramMark
}

/// One side of a relationship, before inverses are paired.
struct RelationshipEnd {
    var entity: String
    var name: String
    var destination: String
    var inverse: String?
    var cardinality: String
    var mark: DiagramMark

    init(entity: String, _ relationship: Relationship, destination: String? = nil, mark: DiagramMark) {
        self.entity = entity
        name = relationship.name
        self.destination = destination ?? relationship.destination
        inverse = relationship.inverse
        cardinality = Self.cardinality(of: relationship)
        self.mark = mark
    }

    /// A non-optional to-many needs at least one object, as in Core Data's validation.
    static func cardinality(of relationship: Relationship) -> String {
        guard relationship.isToMany else { return relationship.isOptional ? "0..1" : "1" }
        let lower = max(relationship.minCount, relationship.isOptional ? 0 : 1)
        return "\(lower)..\(relationship.maxCount == 0 ? "*" : String(relationship.maxCount))"
    }
}
