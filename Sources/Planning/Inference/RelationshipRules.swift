import ObjectModel

/// Lightweight rules for relationships. `entity` in refusals is the destination entity that
/// declares the relationship.
enum RelationshipRules {
    /// A required to-one is a NOT NULL column (or a CHECK in a sub-entity's rows): added to an
    /// entity with rows, or made required, it can fail on existing rows, so the store is checked
    /// before applying. To-many counts are not enforced by the store: nothing to check.
    static func needsDataCheck(_ source: Relationship?, _ destination: Relationship) -> Bool {
        guard !destination.isToMany, !destination.isOptional else { return false }
        return source?.isOptional ?? true
    }

    /// What differs between matched relationships, in this order: cardinality, ordering,
    /// optionality, count bounds, delete rule, inverse. `inverseName` gives the destination name
    /// of a source relationship (`entity`, `relationship`: source names), nil when removed.
    static func compare(
        _ source: Relationship, _ destination: Relationship, entity: String, matches: EntityMatches,
        inverseName: (_ entity: String, _ relationship: String) -> String?
    ) -> (changes: [PropertyChange], refusals: [InferenceRefusal]) {
        var changes: [PropertyChange] = []
        var refusals: [InferenceRefusal] = []
        if let target = matches.destinationName(of: source.destination), target != destination.destination {
            refusals.append(.destinationChanged(entity: entity, relationship: destination.name, from: target, to: destination.destination))
        }
        if source.isToMany && !destination.isToMany {
            refusals.append(.toManyToToOne(entity: entity, relationship: destination.name))
        } else if !source.isToMany && destination.isToMany {
            changes.append(.toOneToToMany)
        }
        if destination.isToMany && source.isOrdered != destination.isOrdered {
            changes.append(.orderedChanged(isOrdered: destination.isOrdered))
        }
        if source.isOptional && !destination.isOptional {
            changes.append(.madeRequired(backfill: nil))
        } else if !source.isOptional && destination.isOptional {
            changes.append(.madeOptional)
        }
        if source.isToMany && destination.isToMany {
            if source.minCount != destination.minCount {
                changes.append(.minCountChanged(from: source.minCount, to: destination.minCount))
            }
            if source.maxCount != destination.maxCount {
                changes.append(.maxCountChanged(from: source.maxCount, to: destination.maxCount))
            }
        }
        if source.deleteRule != destination.deleteRule {
            changes.append(.deleteRuleChanged(from: source.deleteRule, to: destination.deleteRule))
        }
        let formerInverse = source.inverse.flatMap { inverseName(source.destination, $0) }
        if formerInverse != destination.inverse {
            changes.append(.inverseChanged(from: source.inverse, to: destination.inverse))
        }
        return (changes, refusals)
    }

    /// Whether matched relationships hold the same links: the old destination entity still
    /// exists. When it is removed, its links go with it (remove + add, not a match).
    static func keepsLinks(_ source: Relationship, matches: EntityMatches) -> Bool {
        matches.destinationName(of: source.destination) != nil
    }
}
