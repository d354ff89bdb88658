/// Which column of its hierarchy's table holds each stored attribute and each to-one stored as
/// a column, for every entity that declares one (docs/store-format.md, "Columns of a
/// hierarchy"). Computed from the version alone, so a fresh store and a migrated one agree.
///
/// 1. Declarations whose snake_case names meet (`likeCount` in two siblings, or `rawGroupUid`
///    and `rawGroupUID`) are grouped by their column's shape: the SQL type of an attribute; the
///    destination hierarchy and foreign-key rule of a to-one.
/// 2. One shape: they share the plain column; each entity's constraints stay scoped by `_entity`.
/// 3. Several shapes: each shape gets its own column, the plain name followed by what tells the
///    shapes apart (`like_count_integer`, `owner_persisted_obv_owned_identity_pk`). The name
///    depends on the shapes only, never on which entity came first, so adding a sibling of a
///    shape already present renames nothing.
/// 4. Two declarations of one entity's rows (an entity and its ancestor, or one entity) cannot
///    share: a collision, reported by the validator.
public struct PropertyColumns: Sendable {
    public struct Declaration: Sendable, Hashable, CustomStringConvertible {
        public var entity: String
        public var property: String
        public var description: String { "\(entity).\(property)" }
    }

    /// Two declarations that would take one column of one table.
    public struct Collision: Sendable, Hashable {
        public var declaration: Declaration
        public var other: Declaration
        public var column: String
        public var table: String
    }

    enum Shape: Hashable {
        case attribute(sqlType: String)
        case toOne(destinationRoot: String, rule: DeleteRule)
    }

    /// Declaring entity + property -> column.
    private var columns: [Declaration: String] = [:]
    /// Declaring entity + to-one -> the order column of its ordered to-many inverse.
    private var orderColumns: [Declaration: String] = [:]
    public private(set) var collisions: [Collision] = []

    public init(version: ModelVersion) {
        for root in version.rootEntities {
            assign(hierarchy: version.hierarchy(of: root), table: StoreNaming.tableName(entity: root.name), in: version)
        }
    }

    /// The column of an attribute or column-stored to-one, declared by `entity`.
    public func column(ofProperty property: String, declaredBy entity: String) -> String? {
        columns[Declaration(entity: entity, property: property)]
    }

    /// The column of an attribute or column-stored to-one as seen from `entity`: its own or an
    /// ancestor's declaration, the nearest first. Walks up as `ModelVersion.ancestry` does
    /// without building the chain (planning asks this for every column of every step); on a
    /// cycle the walk only meets declarations it has seen, so a bound replaces the set of names.
    public func column(ofProperty property: String, of entity: Entity, in version: ModelVersion) -> String? {
        var name = entity.name
        var parent = entity.parent
        for _ in 0...version.entities.count {
            if let column = columns[Declaration(entity: name, property: property)] { return column }
            guard let parentName = parent, let next = version.entity(named: parentName) else { return nil }
            name = parentName
            parent = next.parent
        }
        return nil
    }

    /// The order column beside a to-one's column, when its inverse is an ordered to-many.
    public func orderColumn(ofToOne property: String, declaredBy entity: String) -> String? {
        orderColumns[Declaration(entity: entity, property: property)]
    }

    /// Every declaration, with its column, in model order of the entities.
    public func declarations(in version: ModelVersion) -> [(declaration: Declaration, column: String)] {
        version.entities.flatMap { entity in
            (entity.attributes.map(\.name) + entity.relationships.map(\.name)).compactMap { name in
                column(ofProperty: name, declaredBy: entity.name).map { (Declaration(entity: entity.name, property: name), $0) }
            }
        }
    }

    private mutating func assign(hierarchy: [Entity], table: String, in version: ModelVersion) {
        // 1. Declarations by plain column, in model order.
        var plain: [(column: String, members: [(Declaration, Shape, Relationship?)])] = []
        func declare(_ column: String, _ member: (Declaration, Shape, Relationship?)) {
            if let index = plain.firstIndex(where: { $0.column == column }) {
                plain[index].members.append(member)
            } else {
                plain.append((column, [member]))
            }
        }
        for entity in hierarchy {
            for attribute in entity.attributes where !attribute.isTransient && attribute.type != .undefined {
                declare(StoreNaming.columnName(attribute: attribute.name),
                        (Declaration(entity: entity.name, property: attribute.name), .attribute(sqlType: attribute.type.columnType), nil))
            }
            for relationship in entity.relationships where version.storage(of: relationship, in: entity) == .column {
                guard let destination = version.entity(named: relationship.destination) else { continue }
                let shape = Shape.toOne(destinationRoot: version.root(of: destination).name, rule: version.foreignKeyRule(of: relationship))
                declare(StoreNaming.foreignKeyColumnName(relationship: relationship.name),
                        (Declaration(entity: entity.name, property: relationship.name), shape, relationship))
            }
        }
        // 2-4. Shared, disambiguated or colliding.
        var taken: [String: Declaration] = [:]
        func take(_ column: String, by declaration: Declaration) {
            if let other = taken[column] {
                collisions.append(Collision(declaration: declaration, other: other, column: column, table: table))
            } else {
                taken[column] = declaration
            }
        }
        for (column, members) in plain {
            for (index, member) in members.enumerated() {
                if let other = members[..<index].first(where: { Self.shareRows($0.0.entity, member.0.entity, in: version) }) {
                    collisions.append(Collision(declaration: member.0, other: other.0, column: column, table: table))
                }
            }
            var shapes: [Shape] = []
            for member in members where !shapes.contains(member.1) { shapes.append(member.1) }
            for shape in shapes {
                let sharing = members.filter { $0.1 == shape }
                let name = shapes.count == 1 ? column : Self.disambiguated(column, shape: shape, among: shapes, property: sharing[0].0.property)
                take(name, by: sharing[0].0)
                var orderTaken = false
                for (declaration, _, relationship) in sharing {
                    columns[declaration] = name
                    guard let relationship, let inverse = version.inverse(of: relationship), inverse.isToMany, inverse.isOrdered else { continue }
                    let order = shapes.count == 1
                        ? StoreNaming.orderColumnName(relationship: relationship.name)
                        : Self.disambiguatedOrder(shape: shape, among: shapes, property: relationship.name)
                    if !orderTaken { take(order, by: declaration) }
                    orderTaken = true
                    orderColumns[declaration] = order
                }
            }
        }
    }

    /// Whether rows of one entity would hold both declarations: the same entity, or one an
    /// ancestor of the other.
    static func shareRows(_ a: String, _ b: String, in version: ModelVersion) -> Bool {
        guard let first = version.entity(named: a), let second = version.entity(named: b) else { return false }
        return version.ancestry(of: first).contains { $0.name == b } || version.ancestry(of: second).contains { $0.name == a }
    }

    /// `<name>_<sql type>` for an attribute; `<name>_<destination table>[_<rule>]_pk` for a to-one,
    /// the rule only when two shapes have the same destination.
    static func disambiguated(_ column: String, shape: Shape, among shapes: [Shape], property: String) -> String {
        switch shape {
        case .attribute(let sqlType):
            return StoreNaming.shortened(StoreNaming.words(property) + "_" + StoreNaming.words(sqlType))
        case .toOne:
            return StoreNaming.shortened(toOneStem(shape: shape, among: shapes, property: property) + "_pk")
        }
    }

    static func disambiguatedOrder(shape: Shape, among shapes: [Shape], property: String) -> String {
        StoreNaming.shortened(toOneStem(shape: shape, among: shapes, property: property) + "_order")
    }

    private static func toOneStem(shape: Shape, among shapes: [Shape], property: String) -> String {
        guard case .toOne(let destination, let rule) = shape else { return StoreNaming.words(property) }
        let sameDestination = shapes.filter { if case .toOne(destination, _) = $0 { true } else { false } }.count > 1
        return StoreNaming.words(property) + "_" + StoreNaming.words(destination) + (sameDestination ? "_" + StoreNaming.words(rule.rawValue) : "")
    }
}
