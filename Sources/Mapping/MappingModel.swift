/// An explicit mapping model between two versions (Core Data's NSMappingModel), as read from a
/// native mapping file or an Xcode `.xcmappingmodel`. Expressions are kept as text here; they
/// are parsed and type-checked against both versions before anything runs.
public struct MappingModel: Sendable, Hashable {
    /// Version names.
    public var source: String
    public var destination: String
    public var entityMappings: [EntityMappingDefinition]
    /// The file it was read from, for messages.
    public var file: String
    /// Destination entities no entity mapping makes get the entity mapping Xcode generates for
    /// them (`completed(source:destination:)`): true for native files, which list only what
    /// differs; an Xcode file lists every entity mapping it has.
    public var generatesUnmentionedEntityMappings: Bool
    /// The model paths an Xcode mapping model records for its source and destination
    /// (`…/Recipes.xcdatamodeld/Recipes 2.xcdatamodel`); empty for native files.
    public var modelPaths: [String]

    public init(
        source: String, destination: String, entityMappings: [EntityMappingDefinition], file: String,
        generatesUnmentionedEntityMappings: Bool = false, modelPaths: [String] = []
    ) {
        self.source = source
        self.destination = destination
        self.entityMappings = entityMappings
        self.file = file
        self.generatesUnmentionedEntityMappings = generatesUnmentionedEntityMappings
        self.modelPaths = modelPaths
    }
}

/// The kinds of entity mapping Core Data knows (NSEntityMappingType).
public enum EntityMappingType: String, Sendable, Hashable, CaseIterable {
    case add
    case remove
    case copy
    case transform
    case custom
}

/// One entity mapping (NSEntityMapping).
public struct EntityMappingDefinition: Sendable, Hashable {
    public var name: String
    public var type: EntityMappingType
    public var sourceEntity: String?
    public var destinationEntity: String?
    /// A source filter predicate, NSPredicate syntax.
    public var filter: String?
    /// A custom entity migration policy, by registered name.
    public var policy: String?
    /// Destination attribute name -> value expression (NSExpression syntax), in file order.
    public var attributeMappings: [PropertyMappingDefinition]
    /// Destination relationship name -> value expression.
    public var relationshipMappings: [PropertyMappingDefinition]

    public init(
        name: String, type: EntityMappingType, sourceEntity: String?, destinationEntity: String?,
        filter: String? = nil, policy: String? = nil, attributeMappings: [PropertyMappingDefinition] = [],
        relationshipMappings: [PropertyMappingDefinition] = []
    ) {
        self.name = name
        self.type = type
        self.sourceEntity = sourceEntity
        self.destinationEntity = destinationEntity
        self.filter = filter
        self.policy = policy
        self.attributeMappings = attributeMappings
        self.relationshipMappings = relationshipMappings
    }
}

/// One property mapping (NSPropertyMapping): a destination property and the expression giving
/// its value; nil means the default Xcode generates (`$source.<name>`, or the relationship
/// through the entity mapping of its destination entity).
public struct PropertyMappingDefinition: Sendable, Hashable {
    public var name: String
    public var valueExpression: String?

    public init(name: String, valueExpression: String?) {
        self.name = name
        self.valueExpression = valueExpression
    }
}
