import ObjectModel

/// Entity hierarchies across versions. Each source hierarchy is one table, so:
///
/// - Adding a new parent above an existing root is allowed: the hierarchy gains a root and keeps
///   its rows. Adding sub-entities, moving an entity out of its hierarchy (its rows move to a
///   table of their own) and moving it under another parent of the same hierarchy are allowed.
/// - Merging is refused: when the entities of one destination hierarchy continue entities of two
///   or more source hierarchies (two existing roots under one parent, an entity moved under an
///   entity of another existing hierarchy), rows stored in two tables would have to share one.
///   As Core Data puts it, entities that share no parent in the source cannot share one in the
///   destination.
enum HierarchyRules {
    /// One refusal per destination hierarchy and foreign source hierarchy, naming the topmost
    /// entity that came from it.
    static func mergeRefusals(_ matches: EntityMatches) -> [InferenceRefusal] {
        var refusals: [InferenceRefusal] = []
        for root in matches.destination.rootEntities {
            // Members by the root of the source entity they continue, shallowest first.
            let members = matches.destination.hierarchy(of: root).enumerated()
                .filter { matches.sourceEntity(of: $0.element) != nil }
                .map { (depth: matches.destination.ancestry(of: $0.element).count, order: $0.offset, entity: $0.element) }
                .sorted { ($0.depth, $0.order) < ($1.depth, $1.order) }
                .map(\.entity)
            var groups: [(sourceRoot: String, topmost: Entity)] = []
            for member in members {
                let sourceRoot = matches.source.root(of: matches.sourceEntity(of: member)!).name
                if !groups.contains(where: { $0.sourceRoot == sourceRoot }) {
                    groups.append((sourceRoot, member))
                }
            }
            guard let kept = groups.first, groups.count > 1 else { continue }
            // The shallowest group stays (the root's own, when the root existed); the others moved in.
            for group in groups.dropFirst() {
                refusals.append(.mergedHierarchies(
                    entity: group.topmost.name, root: root.name,
                    otherSourceRoot: kept.sourceRoot, sourceRoot: group.sourceRoot
                ))
            }
        }
        return refusals
    }

    /// The change of the entity's own parent link, parents compared through the entity matching.
    static func change(from sourceEntity: Entity, to destinationEntity: Entity, matches: EntityMatches) -> HierarchyChange? {
        let formerParent = sourceEntity.parent.flatMap { matches.source.entity(named: $0) }
        let newParent = destinationEntity.parent.flatMap { matches.destination.entity(named: $0) }
        switch (formerParent, newParent) {
        case (nil, nil):
            return nil
        case (nil, let newParent?):
            return .parentAdded(parent: newParent.name)
        case (let formerParent?, nil):
            return .parentRemoved(formerParent: formerParent.name)
        case (let formerParent?, let newParent?):
            if matches.destinationName(of: formerParent.name) == newParent.name { return nil }
            return .parentChanged(from: formerParent.name, to: newParent.name)
        }
    }

    /// Whether a property matched in an entity pair moved up or down its hierarchy.
    ///
    /// 1. Declared by (the match of) the same entity: not moved.
    /// 2. The old declaring entity is still an ancestor: up when the new one is above it.
    /// 3. Otherwise (old declarer removed, or the entity changed parent): up when declared more
    ///    levels above the entity than before.
    static func move<Property>(
        from source: InheritedProperty<Property>, to destination: InheritedProperty<Property>,
        destinationEntity: Entity, matches: EntityMatches
    ) -> PropertyChange? {
        let oldDeclarer = matches.destinationName(of: source.declaringEntity)
        if oldDeclarer == destination.declaringEntity { return nil }
        let ancestry = matches.destination.ancestry(of: destinationEntity).map(\.name)
        let isUp: Bool
        if let oldDeclarer, let oldPosition = ancestry.firstIndex(of: oldDeclarer),
           let newPosition = ancestry.firstIndex(of: destination.declaringEntity) {
            isUp = newPosition < oldPosition
        } else {
            isUp = destination.level > source.level
        }
        return isUp
            ? .movedUp(from: source.declaringEntity, to: destination.declaringEntity)
            : .movedDown(from: source.declaringEntity, to: destination.declaringEntity)
    }
}
