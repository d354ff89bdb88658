/// What happens to the destination objects when a source object is deleted.
public enum DeleteRule: String, Sendable, Hashable, CaseIterable {
    case nullify = "Nullify"
    case cascade = "Cascade"
    case deny = "Deny"
    case noAction = "No Action"

    /// Accepts `Nullify`, `nullify`, `No Action`, `noAction`, `no-action`, …
    public init?(spelling: String) {
        let key = spelling.lowercased().filter { $0.isLetter }
        guard let rule = DeleteRule.allCases.first(where: { $0.rawValue.lowercased().filter(\.isLetter) == key }) else {
            return nil
        }
        self = rule
    }
}

public struct Attribute: PropertyDescription {
    public var name: String
    public var type: AttributeType
    public var isOptional: Bool
    public var isTransient: Bool
    public var isReadOnly: Bool
    /// The default as written in the model file; parsed against `type` by `DefaultValue`.
    public var defaultValue: String?
    public var renamingIdentifier: String?
    public var versionHashModifier: String?
    public var userInfo: [String: String]

    public init(
        name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
        isReadOnly: Bool = false, defaultValue: String? = nil, renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil, userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.isReadOnly = isReadOnly
        self.defaultValue = defaultValue
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
    }
}

public struct Relationship: PropertyDescription {
    public var name: String
    public var destination: String
    public var inverse: String?
    public var isToMany: Bool
    public var isOrdered: Bool
    public var minCount: Int
    /// 0 means no upper bound.
    public var maxCount: Int
    public var deleteRule: DeleteRule
    public var isOptional: Bool
    public var isTransient: Bool
    public var isReadOnly: Bool
    public var renamingIdentifier: String?
    public var versionHashModifier: String?
    public var userInfo: [String: String]

    public init(
        name: String, destination: String, inverse: String? = nil, isToMany: Bool = false,
        isOrdered: Bool = false, minCount: Int = 0, maxCount: Int? = nil,
        deleteRule: DeleteRule = .nullify, isOptional: Bool = true, isTransient: Bool = false,
        isReadOnly: Bool = false, renamingIdentifier: String? = nil, versionHashModifier: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.minCount = minCount
        self.maxCount = maxCount ?? (isToMany ? 0 : 1)
        self.deleteRule = deleteRule
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.isReadOnly = isReadOnly
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
    }
}

/// A fetch index: a named list of properties to index together.
public struct FetchIndex: Sendable, Hashable {
    public var name: String
    public var properties: [String]

    public init(name: String, properties: [String]) {
        self.name = name
        self.properties = properties
    }
}

public struct Entity: ModelElement {
    public var name: String
    public var parent: String?
    public var isAbstract: Bool
    public var className: String?
    public var renamingIdentifier: String?
    public var versionHashModifier: String?
    public var userInfo: [String: String]
    /// Attributes and relationships declared by this entity (not inherited), in file order.
    public var attributes: [Attribute]
    public var relationships: [Relationship]
    /// Each constraint is a list of property names unique together.
    public var uniquenessConstraints: [[String]]
    public var indexes: [FetchIndex]

    public init(
        name: String, parent: String? = nil, isAbstract: Bool = false, className: String? = nil,
        renamingIdentifier: String? = nil, versionHashModifier: String? = nil,
        userInfo: [String: String] = [:], attributes: [Attribute] = [],
        relationships: [Relationship] = [], uniquenessConstraints: [[String]] = [],
        indexes: [FetchIndex] = []
    ) {
        self.name = name
        self.parent = parent
        self.isAbstract = isAbstract
        self.className = className
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.userInfo = userInfo
        self.attributes = attributes
        self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
    }

    public func attribute(named name: String) -> Attribute? {
        attributes.first { $0.name == name }
    }

    public func relationship(named name: String) -> Relationship? {
        relationships.first { $0.name == name }
    }
}

/// One version of an object model (one `.xcdatamodel`, or one native version file).
public struct ModelVersion: Sendable, Hashable {
    public var name: String { didSet { derived = DerivedValues() } }
    public var entities: [Entity] {
        didSet { index = EntityIndex(entities); derived = DerivedValues() }
    }
    /// Core Data's version identifiers; informational, never hashed.
    public var versionIdentifiers: [String] { didSet { derived = DerivedValues() } }
    /// The file this version was read from, for messages.
    public var sourceFile: String { didSet { derived = DerivedValues() } }
    /// Lookups by name and parent, kept with `entities`: models of thousands of entities, or
    /// hierarchies thousands deep, stay linear to validate and lay out.
    private var index: EntityIndex
    /// What is computed from the version once and shared by its copies (`cached(_:_:)`).
    var derived = DerivedValues()

    public init(name: String, entities: [Entity], versionIdentifiers: [String] = [], sourceFile: String = "") {
        self.name = name
        self.entities = entities
        self.versionIdentifiers = versionIdentifiers
        self.sourceFile = sourceFile
        index = EntityIndex(entities)
    }

    public func entity(named name: String) -> Entity? {
        index.positions[name].map { entities[$0] }
    }

    /// The chain from the root entity down to `entity`, root first. Stops on a cycle.
    public func ancestry(of entity: Entity) -> [Entity] {
        var chain = [entity]
        var seen: Set<String> = [entity.name]
        var current = entity
        while let parentName = current.parent, let parent = self.entity(named: parentName), !seen.contains(parentName) {
            chain.append(parent)
            seen.insert(parentName)
            current = parent
        }
        return chain.reversed()
    }

    public func root(of entity: Entity) -> Entity {
        ancestry(of: entity)[0]
    }

    /// The entity and every entity below it, in model order.
    public func hierarchy(of entity: Entity) -> [Entity] {
        guard let start = index.positions[entity.name] else { return [] }
        var found: Set<Int> = [start]
        var pending = [entity.name]
        while let name = pending.popLast() {
            for child in index.children[name, default: []] where found.insert(child).inserted {
                pending.append(entities[child].name)
            }
        }
        return found.sorted().map { entities[$0] }
    }

    /// Entities without a parent: one table each.
    public var rootEntities: [Entity] {
        entities.filter { $0.parent == nil || entity(named: $0.parent!) == nil }
    }

    /// Attributes of the entity including inherited ones, the root's first.
    public func allAttributes(of entity: Entity) -> [Attribute] {
        ancestry(of: entity).flatMap(\.attributes)
    }

    /// Relationships of the entity including inherited ones, the root's first.
    public func allRelationships(of entity: Entity) -> [Relationship] {
        ancestry(of: entity).flatMap(\.relationships)
    }

    /// The inverse of a relationship, if it names one that exists and that does not name
    /// another relationship as its own inverse. Core Data keeps each side's inverse as that
    /// side's own setting; a relationship whose inverse points elsewhere is stored as if it had
    /// none (docs/store-format.md), and `ModelValidator.warnings` reports it.
    public func inverse(of relationship: Relationship) -> Relationship? {
        guard let inverse = declaredInverse(of: relationship) else { return nil }
        if let back = inverse.inverse, back != relationship.name { return nil }
        return inverse
    }

    /// The relationship a relationship names as its inverse, whatever that one names back.
    public func declaredInverse(of relationship: Relationship) -> Relationship? {
        guard let inverseName = relationship.inverse, let destination = entity(named: relationship.destination) else {
            return nil
        }
        return allRelationships(of: destination).first { $0.name == inverseName }
    }
}

/// Every version of a model, in migration order, with the current one.
public struct VersionedModel: Sendable {
    public enum Format: String, Sendable {
        case native
        case xcode
    }

    public var name: String
    public var versions: [ModelVersion]
    public var currentVersionName: String
    public var path: String
    public var format: Format
    /// Problems tolerated while reading (quirks of real files), one line each.
    public var warnings: [ModelIssue]
    /// Versions the model lists whose file could not be read (or that a caller set aside), with
    /// their problems; they are not in `versions`, so a command that does not need them still runs.
    public var unusableVersions: [UnusableVersion]
    /// Every version's name, usable or not, in migration order.
    public var versionNames: [String]
    /// Whether the team declared the order (a native model's `model.yaml`, an Xcode model's
    /// `<Package>.versions.yaml`). An `.xcdatamodeld` without one is ordered by name, a guess:
    /// a store may then go to the target directly whatever the names say (docs/model-format.md).
    public var orderIsDeclared: Bool

    /// `versionNames` defaults to the usable versions' names followed by the unusable ones'.
    public init(
        name: String, versions: [ModelVersion], currentVersionName: String, path: String,
        format: Format, warnings: [ModelIssue] = [], unusableVersions: [UnusableVersion] = [], versionNames: [String]? = nil,
        orderIsDeclared: Bool? = nil
    ) {
        self.orderIsDeclared = orderIsDeclared ?? (format == .native)
        self.name = name
        self.versions = versions
        self.currentVersionName = currentVersionName
        self.path = path
        self.format = format
        self.warnings = warnings
        self.unusableVersions = unusableVersions
        self.versionNames = versionNames ?? (versions.map(\.name) + unusableVersions.map(\.name))
    }

    /// The current version; callers check first that it is usable (`requireUsable`).
    public var currentVersion: ModelVersion {
        guard let version = version(named: currentVersionName) else {
            preconditionFailure("current version \(currentVersionName) is not among the usable versions of \(name)")
        }
        return version
    }

    public func version(named name: String) -> ModelVersion? {
        versions.first { $0.name == name }
    }
}
