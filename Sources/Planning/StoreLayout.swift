import ObjectModel
import SQLBuilding

/// How a model version is laid out in a PostgreSQL schema. A pure value: the contract in
/// docs/store-format.md, computed from the model and nothing else.
public struct StoreLayout: Sendable, Hashable {
    public var schema: String
    public var tables: [TableLayout]

    public func table(named name: String) -> TableLayout? {
        tables.first { $0.name == name }
    }
}

public struct TableLayout: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// The table of an entity hierarchy, named after its root.
        case hierarchy(root: String)
        /// A join table of a to-many relationship stored apart.
        case join(entity: String, relationship: String)

        public var isHierarchy: Bool {
            if case .hierarchy = self { return true }
            return false
        }
    }

    public var name: String
    public var kind: Kind
    /// Entities whose rows live here (hierarchy tables), in model order.
    public var entities: [String]
    public var columns: [ColumnLayout]
    public var primaryKey: [String]
    public var checks: [CheckConstraint]
    public var foreignKeys: [ForeignKey]
    public var uniqueConstraints: [UniqueConstraint]
    public var indexes: [IndexLayout]

    public func column(named name: String) -> ColumnLayout? {
        columns.first { $0.name == name }
    }
}

public struct ColumnLayout: Sendable, Hashable {
    public enum Role: Sendable, Hashable {
        case primaryKey
        case entityName
        case attribute(entity: String, name: String)
        case toOne(entity: String, relationship: String)
        case order(entity: String, relationship: String)
        case joinOwner
        case joinTarget
    }

    public var name: String
    public var type: String
    public var isNullable: Bool
    /// The column's default: an attribute's default value, or `_entity`'s only concrete entity.
    public var defaultValue: DefaultValue?
    public var isIdentity: Bool
    public var role: Role

    /// The DEFAULT expression, rendered for the column's type.
    public var defaultExpression: SQL? {
        defaultValue.map { ColumnTypes.defaultExpression($0, columnType: type) }
    }
}

public struct ForeignKey: Sendable, Hashable {
    public var name: String
    public var column: String
    public var referencedTable: String
    public var onDelete: String
}

public struct UniqueConstraint: Sendable, Hashable {
    public var name: String
    public var columns: [String]
    /// Scoped to some entities of a hierarchy: a partial unique index.
    public var entityScope: [String]?
}

public struct IndexLayout: Sendable, Hashable {
    public var name: String
    public var columns: [String]
}
