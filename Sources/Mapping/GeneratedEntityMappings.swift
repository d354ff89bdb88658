import ObjectModel

extension MappingModel {
    /// The mapping model as it runs. For a native file (`generatesUnmentionedEntityMappings`),
    /// each concrete destination entity that no entity mapping makes gets the entity mapping
    /// Xcode generates for it: a `copy` named `<Source>To<Destination>` from the source entity
    /// of the same name, else the one its renaming identifier names, with the default property
    /// mappings (`$source.<name>`, relationships through the entity mapping of their
    /// destination entity). Without it, a file naming only `RecipeToRecipe` would leave every
    /// other entity's rows behind.
    ///
    /// Not generated: a mapping for an abstract entity (it has no rows of its own, and would
    /// take in sub-entity rows as instances of an abstract entity), nor one from a source
    /// entity an entity mapping of the file reads already (a transform or a `remove` says what
    /// becomes of its rows; a second copy would duplicate them).
    public func completed(source: ModelVersion, destination: ModelVersion) -> MappingModel {
        guard generatesUnmentionedEntityMappings else { return self }
        var completed = self
        let made = Set(entityMappings.compactMap(\.destinationEntity))
        var read = Set(entityMappings.compactMap(\.sourceEntity))
        var names = Set(entityMappings.map(\.name))
        for entity in destination.entities where !entity.isAbstract && !made.contains(entity.name) {
            guard let from = Self.sourceEntity(matching: entity, source: source, destination: destination), !read.contains(from.name) else { continue }
            var name = "\(from.name)To\(entity.name)"
            var suffix = 2
            while names.contains(name) {
                name = "\(from.name)To\(entity.name)\(suffix)"
                suffix += 1
            }
            completed.entityMappings.append(EntityMappingDefinition(name: name, type: .copy, sourceEntity: from.name, destinationEntity: entity.name))
            names.insert(name)
            read.insert(from.name)
        }
        return completed
    }

    /// The source entity of the same name; else the one the renaming identifier names, when
    /// the destination no longer has an entity of that name (a stale identifier renames
    /// nothing).
    static func sourceEntity(matching entity: Entity, source: ModelVersion, destination: ModelVersion) -> Entity? {
        if let same = source.entity(named: entity.name) { return same }
        guard let identifier = entity.renamingIdentifier,
              let renamed = source.entity(named: identifier) ?? source.entities.first(where: { $0.renamingIdentifier == identifier })
        else { return nil }
        return destination.entity(named: renamed.name) == nil ? renamed : nil
    }
}
