/// Where a relationship's links are kept in the store (docs/store-format.md, "Relationships").
/// Part of the store contract; it lives with the model because which to-ones own a column
/// decides the column names (`PropertyColumns`), which validation checks.
public enum RelationshipStorage: Sendable, Hashable {
    /// Not stored (transient).
    case none
    /// A `<name>_pk` column in the entity's table.
    case column
    /// Stored by the inverse: its to-one column, or the join table it owns.
    case inverseColumn
    case inverseJoinTable
    case joinTable
}

extension ModelVersion {
    /// Where the links of `relationship`, declared by `entity`, are kept.
    public func storage(of relationship: Relationship, in entity: Entity) -> RelationshipStorage {
        if relationship.isTransient { return .none }
        let inverse = inverse(of: relationship).flatMap { $0.isTransient ? nil : $0 }
        let ownsPair: Bool = {
            guard let inverse else { return true }
            return (entity.name, relationship.name) <= (relationship.destination, inverse.name)
        }()
        switch (relationship.isToMany, inverse?.isToMany) {
        case (false, nil), (false, true?): return .column
        case (false, false?): return ownsPair ? .column : .inverseColumn
        case (true, false?): return .inverseColumn
        case (true, true?): return ownsPair ? .joinTable : .inverseJoinTable
        case (true, nil): return .joinTable
        }
    }

    /// The delete rule a to-one's foreign key enforces: the inverse's (a delete rule says what
    /// happens to the destination when the source is deleted); without an inverse, a nullable
    /// column is cleared and a required one blocks the delete.
    public func foreignKeyRule(of relationship: Relationship) -> DeleteRule {
        inverse(of: relationship)?.deleteRule ?? (relationship.isOptional ? .nullify : .noAction)
    }
}
