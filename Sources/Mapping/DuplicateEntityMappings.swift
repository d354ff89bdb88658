extension MappingModel {
    /// Entity mappings reading the same source entity into the same destination entity with
    /// the same filter (or none), in groups of two or more, in file order. Each makes a
    /// destination row of every source row it reads, so a group multiplies those rows by its
    /// size: refused by `validate`, `plan` and `apply`. Distinct filters may split the rows
    /// between them (Core Data's way to send rows to different entity mappings) and are kept.
    public var duplicateEntityMappings: [[EntityMappingDefinition]] {
        var groups: [String: [EntityMappingDefinition]] = [:]
        var order: [String] = []
        for entityMapping in entityMappings where entityMapping.type != .add && entityMapping.type != .remove {
            guard let source = entityMapping.sourceEntity, let destination = entityMapping.destinationEntity else { continue }
            let key = [source, destination, entityMapping.filter ?? ""].joined(separator: "\u{0}") + (entityMapping.filter == nil ? "" : "\u{1}")
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(entityMapping)
        }
        return order.compactMap { groups[$0] }.filter { $0.count > 1 }
    }

    /// One sentence per group of `duplicateEntityMappings`.
    public var duplicateEntityMappingReasons: [String] {
        duplicateEntityMappings.map { group in
            let first = group[0]
            let names = group.count > 3
                ? group.prefix(3).map(\.name).joined(separator: ", ") + " and \(group.count - 3) more"
                : group.map(\.name).joined(separator: ", ")
            let filter = first.filter.map { "the same filter (\($0))" } ?? "no filter"
            return "\(group.count) entity mappings (\(names)) read \(first.sourceEntity!) into \(first.destinationEntity!) with \(filter): each source row would become \(group.count) rows; keep one, or give each a filter of its own"
        }
    }
}
