/// The inheritance checks in time linear in the number of entities, however deep the
/// hierarchies: a 2,000-level chain once took 29 s, each entity walking up its whole ancestry.
extension ModelValidator {
    /// Entities in an inheritance cycle or below one. Each walk up stops at the first entity a
    /// previous walk settled, so every entity is walked over once.
    static func entitiesInInheritanceCycles(_ version: ModelVersion) -> Set<String> {
        var isCyclic: [String: Bool] = [:]
        for entity in version.entities where isCyclic[entity.name] == nil {
            var path: [String] = []
            var onPath: Set<String> = []
            var current: Entity? = entity
            var endsInCycle = false
            while let step = current, onPath.insert(step.name).inserted {
                if let settled = isCyclic[step.name] {
                    endsInCycle = settled
                    break
                }
                path.append(step.name)
                current = step.parent.flatMap(version.entity(named:))
            }
            if let step = current, isCyclic[step.name] == nil { endsInCycle = true }  // came back onto the path
            for name in path { isCyclic[name] = endsInCycle }
        }
        return Set(isCyclic.filter(\.value).keys)
    }

    /// Validates each entity's properties knowing what its ancestors define, walking each
    /// hierarchy down from its root with a count of the names defined on the current path
    /// (added on the way down, removed on the way back up). Problems come out in model order.
    static func validatePropertiesDownEachHierarchy(
        _ version: ModelVersion, skipping cyclic: Set<String>, report: (String?, String?, String) -> Void
    ) {
        let entities = version.entities
        var children: [String: [Int]] = [:]
        var roots: [Int] = []
        for (position, entity) in entities.enumerated() where !cyclic.contains(entity.name) {
            if let parent = entity.parent, version.entity(named: parent) != nil {
                children[parent, default: []].append(position)
            } else {
                roots.append(position)
            }
        }
        var found: [[(String?, String?, String)]] = Array(repeating: [], count: entities.count)
        var isVisited = Array(repeating: false, count: entities.count)
        var definedOnPath: [String: Int] = [:]
        func ownNames(_ entity: Entity) -> Set<String> {
            Set(entity.attributes.map(\.name) + entity.relationships.map(\.name))
        }
        var pending = roots.reversed().map { (position: $0, isLeaving: false) }
        while let (position, isLeaving) = pending.popLast() {
            let entity = entities[position]
            if isLeaving {
                for name in ownNames(entity) { definedOnPath[name]! -= 1 }
                continue
            }
            guard !isVisited[position] else { continue }
            isVisited[position] = true
            validateProperties(of: entity, in: version, isInherited: { definedOnPath[$0, default: 0] > 0 }) { found[position].append(($0, $1, $2)) }
            for name in ownNames(entity) { definedOnPath[name, default: 0] += 1 }
            pending.append((position, true))
            pending += children[entity.name, default: []].reversed().map { ($0, false) }
        }
        for position in entities.indices where !isVisited[position] {
            validateProperties(of: entities[position], in: version, isInherited: { _ in false }) { found[position].append(($0, $1, $2)) }
        }
        for finding in found.joined() { report(finding.0, finding.1, finding.2) }
    }
}
