import ObjectModel
import SQLBuilding

/// A CHECK constraint of a hierarchy table, as what it requires rather than as SQL text:
/// planning compares kinds, and `expression` renders the condition the store holds.
public struct CheckConstraint: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// Rows name one of the hierarchy's concrete entities: `"_entity" IN ('Book', 'Magazine')`.
        case entityIn([String])
        /// A column the rows of some entities must fill (a sub-entity's required property):
        /// `"_entity" NOT IN ('Book') OR "isbn" IS NOT NULL`.
        case requiredFor(column: String, entities: [String])
    }

    public var name: String
    public var kind: Kind

    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// `<table>_entity_check`: the concrete entities whose rows the table holds.
    public static func entityIn(_ entities: [String], table: String) -> CheckConstraint {
        CheckConstraint(name: StoreNaming.shortened(table + "_entity_check"), kind: .entityIn(entities))
    }

    /// `<table>_<column>_required`: the column is filled in the rows of `entities`.
    public static func required(_ column: String, for entities: [String], table: String) -> CheckConstraint {
        CheckConstraint(name: StoreNaming.shortened(table + "_" + column + "_required"), kind: .requiredFor(column: column, entities: entities))
    }

    /// The condition, as `CHECK (…)` holds it; inline literals only, no binds.
    public var expression: SQL {
        switch kind {
        case .entityIn(let entities):
            "\(ident: Self.entityColumn) IN (\(literals: entities))"
        case .requiredFor(let column, let entities):
            "\(ident: Self.entityColumn) NOT IN (\(literals: entities)) OR \(ident: column) IS NOT NULL"
        }
    }

    static let entityColumn = "_entity"
}

extension CheckConstraint.Kind {
    /// The column a `requiredFor` check requires; nil for the entity check.
    public var requiredColumn: String? {
        if case .requiredFor(let column, _) = self { column } else { nil }
    }

    /// The entities the check names.
    public var entities: [String] {
        switch self {
        case .entityIn(let entities), .requiredFor(_, let entities): entities
        }
    }

    /// The same check once columns are renamed (source -> destination names); nil when a
    /// column it reads has no destination. Entity names are kept as they are, so a check naming
    /// a renamed entity never matches and is recreated after `_entity` is updated.
    func renamingColumns(_ renamed: [String: String]) -> Self? {
        let entityColumn = CheckConstraint.entityColumn
        guard renamed[entityColumn] == entityColumn else { return nil }
        switch self {
        case .entityIn:
            return self
        case .requiredFor(let column, let entities):
            return renamed[column].map { .requiredFor(column: $0, entities: entities) }
        }
    }
}
