import ObjectModel

/// What `MappingInference` concludes about a pair of versions.
public enum InferenceResult: Sendable, Hashable {
    case inferable(InferredMapping)
    /// Every change that blocks inference, each naming its entity (and property).
    case refused([InferenceRefusal])

    public var isInferable: Bool {
        if case .inferable = self { return true }
        return false
    }

    public var mapping: InferredMapping? {
        if case .inferable(let mapping) = self { return mapping }
        return nil
    }

    public var refusals: [InferenceRefusal] {
        if case .refused(let refusals) = self { return refusals }
        return []
    }
}

/// The mapping Core Data would infer between two versions: one entity mapping per destination
/// entity (in destination order), then one per removed source entity (in source order).
public struct InferredMapping: Sendable, Hashable {
    /// Version names.
    public var source: String
    public var destination: String
    public var entityMappings: [EntityMapping]

    public init(source: String, destination: String, entityMappings: [EntityMapping]) {
        self.source = source
        self.destination = destination
        self.entityMappings = entityMappings
    }

    /// Some rows, or some values of kept rows, are dropped: applying needs the user's consent.
    public var hasDataLoss: Bool { entityMappings.contains(where: \.losesData) }

    /// Some existing rows must be checked before anything changes (see `PropertyMapping.needsDataCheck`).
    public var needsDataCheck: Bool {
        entityMappings.contains { mapping in
            (mapping.attributeMappings + mapping.relationshipMappings).contains(where: \.needsDataCheck)
        }
    }

    public func mapping(forDestinationEntity name: String) -> EntityMapping? {
        entityMappings.first { $0.destinationEntity == name }
    }

    public func mapping(forSourceEntity name: String) -> EntityMapping? {
        entityMappings.first { $0.sourceEntity == name }
    }
}

/// How the rows of one entity move from the source to the destination.
///
/// Property mappings cover every stored property of the entity, inherited ones included (as in
/// Core Data's entity mappings): a property declared by a parent appears in the mapping of the
/// parent and of each sub-entity. Transient properties have no storage and never appear.
public struct EntityMapping: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case copy, rename, add, remove
    }

    public var kind: Kind
    public var sourceEntity: String?
    public var destinationEntity: String?
    /// An abstract source entity has no rows of its own: removing its properties loses nothing.
    public var sourceIsAbstract: Bool
    /// Destination property order, then removed source properties in source order.
    public var attributeMappings: [PropertyMapping]
    public var relationshipMappings: [PropertyMapping]
    /// The entity's own parent link changed; its sub-entities follow it.
    public var hierarchyChange: HierarchyChange?

    public init(
        kind: Kind, sourceEntity: String?, destinationEntity: String?, sourceIsAbstract: Bool = false,
        attributeMappings: [PropertyMapping] = [], relationshipMappings: [PropertyMapping] = [],
        hierarchyChange: HierarchyChange? = nil
    ) {
        self.kind = kind
        self.sourceEntity = sourceEntity
        self.destinationEntity = destinationEntity
        self.sourceIsAbstract = sourceIsAbstract
        self.attributeMappings = attributeMappings
        self.relationshipMappings = relationshipMappings
        self.hierarchyChange = hierarchyChange
    }

    /// Rows of this entity, or values they hold, are dropped.
    public var losesData: Bool {
        guard kind != .add, !sourceIsAbstract else { return false }
        return kind == .remove || (attributeMappings + relationshipMappings).contains(where: \.losesData)
    }
}

/// How one property's values move, within one entity mapping.
public struct PropertyMapping: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case copy, rename, add, remove
    }

    public var kind: Kind
    /// Property names in the source and in the destination version.
    public var source: String?
    public var destination: String?
    /// What differs beyond the name, in a fixed order (see `PropertyChange`).
    public var changes: [PropertyChange]
    /// Existing rows can make this mapping fail, so the store is checked before any change: a
    /// required to-one added to an entity with rows, or a to-one made required. Core Data infers
    /// both and validates the links later; the store enforces them at once, so rows without a
    /// link are counted and stop the migration before anything is touched. Likewise a number
    /// type change some values would not survive (`PropertyChange.converted`): rows whose value
    /// would not convert exactly are counted. (Not a refusal: a store whose rows all fit
    /// migrates.)
    public var needsDataCheck: Bool

    public init(kind: Kind, source: String?, destination: String?, changes: [PropertyChange] = [], needsDataCheck: Bool = false) {
        self.kind = kind
        self.source = source
        self.destination = destination
        self.changes = changes
        self.needsDataCheck = needsDataCheck
    }

    /// The property's values are dropped from the entity's rows.
    public var losesData: Bool { kind == .remove }
}

/// A change of an entity's own parent. Which table holds its rows follows from its root in each
/// version; merges of two hierarchies are refused before a mapping is made.
public enum HierarchyChange: Sendable, Hashable {
    /// Was a root; now below `parent` (destination name). In an inferred mapping the entities
    /// above it are new (anything else merges hierarchies): its hierarchy gains a root.
    case parentAdded(parent: String)
    /// Was below `formerParent` (source name); now a root: its rows leave that hierarchy.
    case parentRemoved(formerParent: String)
    /// Below another parent than before (`from`: source name, `to`: destination name): another
    /// entity of its hierarchy, or a new one.
    case parentChanged(from: String, to: String)
}

extension HierarchyChange: CustomStringConvertible {
    public var description: String {
        switch self {
        case .parentAdded(let parent): "parent \(parent) added"
        case .parentRemoved(let formerParent): "parent \(formerParent) removed: now a root"
        case .parentChanged(let from, let to): "parent \(from) -> \(to)"
        }
    }
}
