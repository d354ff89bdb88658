import ObjectModel

/// One change that lightweight inference cannot turn into a mapping, naming its culprit.
public struct InferenceRefusal: Sendable, Hashable, CustomStringConvertible {
    /// Stable codes scripts can match on.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// A non-optional attribute added, or made non-optional, without a default.
        case nonOptionalWithoutDefault
        /// An attribute type change other than between two number types (Boolean, integers,
        /// Decimal, Float, Double): Core Data's inferred mapping carries no other.
        case lossyTypeChange
        /// A to-many relationship made to-one.
        case toManyToToOne
        /// A relationship now points to another entity than the one its links point to.
        case relationshipDestinationChanged
        /// Entities stored in two hierarchies (two tables) in the source share one in the destination.
        case mergedHierarchies
        /// A concrete entity made abstract: its rows would belong to no concrete entity.
        case madeAbstract
        /// Two destination elements claim one source element by renaming identifier.
        case contestedRenamingIdentifier
    }

    /// Destination names, except for an element that only the source has.
    public var entity: String
    public var property: String?
    public var code: Code
    /// What changed, why it blocks inference, and what to do instead.
    public var message: String

    public init(entity: String, property: String? = nil, code: Code, message: String) {
        self.entity = entity
        self.property = property
        self.code = code
        self.message = message
    }

    /// `entity Recipe, property rating: made non-optional without a default; …`
    public var description: String {
        var location = "entity \(entity)"
        if let property { location += ", property \(property)" }
        return "\(location): \(message)"
    }
}

extension InferenceRefusal {
    static let writeMappingModel = "write a mapping model"

    /// The message in its three parts: `changed; because (instead)`.
    init(
        entity: String, property: String? = nil, code: Code,
        changed: String, because: String, instead: String = writeMappingModel
    ) {
        self.init(entity: entity, property: property, code: code, message: "\(changed); \(because) (\(instead))")
    }

    static func addedNonOptionalWithoutDefault(entity: String, attribute: String) -> Self {
        Self(
            entity: entity, property: attribute, code: .nonOptionalWithoutDefault,
            changed: "added as non-optional without a default", because: "existing rows would need a value invented", instead: "give it a default, make it optional, or \(writeMappingModel)"
        )
    }

    static func madeNonOptionalWithoutDefault(entity: String, attribute: String) -> Self {
        Self(
            entity: entity, property: attribute, code: .nonOptionalWithoutDefault,
            changed: "made non-optional without a default", because: "existing rows would need a value invented", instead: "give it a default, or \(writeMappingModel)"
        )
    }

    static func lossyTypeChange(entity: String, attribute: String, from: AttributeType, to: AttributeType) -> Self {
        Self(
            entity: entity, property: attribute, code: .lossyTypeChange,
            changed: "type changed from \(from.rawValue) to \(to.rawValue)", because: "an inferred mapping converts only between number types (Boolean, Integer 16/32/64, Decimal, Float, Double), as Core Data's does"
        )
    }

    static func toManyToToOne(entity: String, relationship: String) -> Self {
        Self(
            entity: entity, property: relationship, code: .toManyToToOne,
            changed: "changed from to-many to to-one", because: "rows linked to several objects would lose links"
        )
    }

    static func destinationChanged(entity: String, relationship: String, from: String, to: String) -> Self {
        Self(
            entity: entity, property: relationship, code: .relationshipDestinationChanged,
            changed: "destination changed from \(from) to \(to)", because: "existing links point to \(from) objects"
        )
    }

    static func mergedHierarchies(entity: String, root: String, otherSourceRoot: String, sourceRoot: String) -> Self {
        Self(
            entity: entity, code: .mergedHierarchies,
            changed: "moved into the hierarchy of \(root), joining entities of the source hierarchy of \(otherSourceRoot)", because: "rows stored apart (hierarchies of \(sourceRoot) and \(otherSourceRoot)) would share one table, and merging hierarchies is not inferred"
        )
    }

    static func madeAbstract(entity: String) -> Self {
        Self(
            entity: entity, code: .madeAbstract,
            changed: "made abstract", because: "its existing rows would belong to no concrete entity", instead: "move them to a sub-entity with a mapping model"
        )
    }

    static func contestedRenamingIdentifier(entity: String, property: String?, identifier: String, claimedBy other: String) -> Self {
        Self(
            entity: entity, property: property, code: .contestedRenamingIdentifier,
            changed: "renaming identifier '\(identifier)' is also claimed by \(other)", because: "only one element can continue '\(identifier)'", instead: "change one of the identifiers"
        )
    }
}
