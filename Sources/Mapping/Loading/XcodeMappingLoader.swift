import Foundation

/// Reads an Xcode `.xcmappingmodel` package: `xcmapping.xml`, a Core Data XML store of
/// `XDDEV*` objects (see the corpus README).
///
/// - `XDDEVMAPPINGMODEL`: `sourcemodelpath` / `destinationmodelpath`, whose basenames are the
///   version names; `entitymappings` lists its entity mappings. Objects it does not reach are
///   leftovers Xcode never deleted, and are ignored.
/// - `XDDEVENTITYMAPPING`: `sourcename`, `destinationname`, `name` (absent when Xcode derives it),
///   `mappingnumber` (the editor's order), `migrationpolicyclassname`,
///   `sourcefilterpredicatestring`; `attributemappings` and `relationshipmappings` list its
///   property mappings. `mappingtypename` is always `Undefined`: the type follows from the rest.
/// - `XDDEVATTRIBUTEMAPPING` / `XDDEVRELATIONSHIPMAPPING`: `name` and an optional
///   `valueexpressiondata` (base64 of an archived NSExpression); a relationship mapping may name
///   the entity mapping its default expression goes through in `sourcemappingname`.
enum XcodeMappingLoader {
    static func load(package path: String) throws -> MappingModel {
        let storePath = path.hasSuffix("/xcmapping.xml") ? path : (path as NSString).appendingPathComponent("xcmapping.xml")
        guard let data = FileManager.default.contents(atPath: storePath) else {
            throw MappingLoadError([MappingIssue(file: path, message: "cannot read \(storePath)")])
        }
        do {
            return try read(CoreDataXMLStore.parse(data, file: path), file: path)
        } catch let issue as MappingIssue {
            throw MappingLoadError([issue])
        }
    }

    /// Builds the mapping model; every undecodable expression is reported, not just the first.
    static func read(_ store: CoreDataXMLStore, file: String) throws -> MappingModel {
        // 1. The one mapping model object and its version names.
        let models = store.objects(ofType: "XDDEVMAPPINGMODEL")
        guard models.count == 1, let model = models.first else {
            throw MappingIssue(file: file, message: "expected one XDDEVMAPPINGMODEL object, found \(models.count)")
        }
        let sourcePath = try modelPath(model, key: "sourcemodelpath", file: file)
        let destinationPath = try modelPath(model, key: "destinationmodelpath", file: file)

        // 2. Its entity mappings, in the editor's order.
        let entityObjects = try referenced(model, "entitymappings", type: "XDDEVENTITYMAPPING", in: store, file: file)
        let ordered = entityObjects.enumerated().sorted {
            (mappingNumber($0.element), $0.offset) < (mappingNumber($1.element), $1.offset)
        }.map(\.element)

        // 3. Each entity mapping with its property mappings; problems are collected.
        var issues: [MappingIssue] = []
        var entityMappings: [EntityMappingDefinition] = []
        for object in ordered {
            do {
                let mapping = try entityMapping(object, in: store, file: file, issues: &issues)
                if entityMappings.contains(where: { $0.name == mapping.name }) {
                    issues.append(MappingIssue(file: file, line: object.line, entityMapping: mapping.name, message: "another entity mapping has the same name"))
                }
                entityMappings.append(mapping)
            } catch let issue as MappingIssue {
                issues.append(issue)
            }
        }
        if !issues.isEmpty { throw MappingLoadError(issues) }
        return MappingModel(
            source: versionName(sourcePath), destination: versionName(destinationPath), entityMappings: entityMappings, file: file,
            modelPaths: [sourcePath, destinationPath]
        )
    }

    static func modelPath(_ model: CoreDataXMLStore.StoredObject, key: String, file: String) throws -> String {
        guard let path = nonEmpty(model.attributes[key]) else {
            throw MappingIssue(file: file, line: model.line, message: "the mapping model has no \(key)")
        }
        return path
    }

    /// `…/Recipes.xcdatamodeld/Recipes 2.xcdatamodel` -> `Recipes 2`.
    static func versionName(_ path: String) -> String {
        ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    }

    static func mappingNumber(_ object: CoreDataXMLStore.StoredObject) -> Int {
        object.attributes["mappingnumber"].flatMap { Int($0) } ?? Int.max
    }

    static func referenced(
        _ object: CoreDataXMLStore.StoredObject, _ relationship: String, type: String, in store: CoreDataXMLStore, file: String
    ) throws -> [CoreDataXMLStore.StoredObject] {
        try (object.relationships[relationship] ?? []).map { id in
            guard let target = store.objects[id], target.type == type else {
                throw MappingIssue(file: file, line: object.line, message: "\(relationship) refers to \(id), which is not an \(type) object")
            }
            return target
        }
    }

    static func entityMapping(
        _ object: CoreDataXMLStore.StoredObject, in store: CoreDataXMLStore, file: String, issues: inout [MappingIssue]
    ) throws -> EntityMappingDefinition {
        let sourceEntity = nonEmpty(object.attributes["sourcename"])
        let destinationEntity = nonEmpty(object.attributes["destinationname"])
        // Xcode stores a name only when the user changed it; otherwise it shows SourceToDestination.
        let name: String
        switch (nonEmpty(object.attributes["name"]), sourceEntity, destinationEntity) {
        case (let stored?, _, _): name = stored
        case (nil, let source?, let destination?): name = source + "To" + destination
        case (nil, let single?, nil), (nil, nil, let single?): name = single
        case (nil, nil, nil):
            throw MappingIssue(file: file, line: object.line, message: "an entity mapping with no name and neither a source nor a destination entity")
        }
        var mapping = EntityMappingDefinition(
            name: name, type: .copy, sourceEntity: sourceEntity, destinationEntity: destinationEntity,
            filter: nonEmpty(object.attributes["sourcefilterpredicatestring"]),
            policy: nonEmpty(object.attributes["migrationpolicyclassname"])
        )
        var hasExpression = false
        for (relationship, type) in [("attributemappings", "XDDEVATTRIBUTEMAPPING"), ("relationshipmappings", "XDDEVRELATIONSHIPMAPPING")] {
            let objects: [CoreDataXMLStore.StoredObject]
            do {
                objects = try referenced(object, relationship, type: type, in: store, file: file)
            } catch var issue as MappingIssue {
                issue.entityMapping = name
                throw issue
            }
            let isRelationship = type == "XDDEVRELATIONSHIPMAPPING"
            let properties = objects.compactMap {
                propertyMapping($0, isRelationship: isRelationship, entityMapping: name, file: file, issues: &issues)
            }
            if isRelationship { mapping.relationshipMappings = properties } else { mapping.attributeMappings = properties }
            hasExpression = hasExpression || objects.contains { $0.attributes["valueexpressiondata"] != nil }
        }
        mapping.type = entityMappingType(
            source: sourceEntity, destination: destinationEntity,
            isTransformed: hasExpression || mapping.filter != nil || mapping.policy != nil
        )
        return mapping
    }

    /// `mappingtypename` is always `Undefined`, so: both entities -> transform when anything is
    /// customised, else copy; source only -> remove; destination only -> add; neither (Xcode's
    /// blank "Mapping") -> custom, which does nothing without a policy.
    static func entityMappingType(source: String?, destination: String?, isTransformed: Bool) -> EntityMappingType {
        switch (source, destination) {
        case (_?, _?): isTransformed ? .transform : .copy
        case (_?, nil): .remove
        case (nil, _?): .add
        case (nil, nil): .custom
        }
    }

    /// One property mapping; an undecodable expression is added to `issues` and yields nil.
    static func propertyMapping(
        _ object: CoreDataXMLStore.StoredObject, isRelationship: Bool, entityMapping: String, file: String, issues: inout [MappingIssue]
    ) -> PropertyMappingDefinition? {
        guard let name = nonEmpty(object.attributes["name"]) else {
            issues.append(MappingIssue(file: file, line: object.line, entityMapping: entityMapping, message: "a property mapping (\(object.id)) has no name"))
            return nil
        }
        if let data = object.attributes["valueexpressiondata"] {
            do {
                return PropertyMappingDefinition(name: name, valueExpression: try ArchivedExpressionDecoder.decode(base64: data).text())
            } catch {
                let reason = (error as? ArchiveDecodingError)?.reason ?? String(describing: error)
                issues.append(MappingIssue(
                    file: file, line: object.line, entityMapping: entityMapping, property: name,
                    message: "cannot decode the value expression: \(reason)"
                ))
                return nil
            }
        }
        if isRelationship, let through = nonEmpty(object.attributes["sourcemappingname"]) {
            return PropertyMappingDefinition(name: name, valueExpression: defaultRelationshipExpression(name: name, through: through))
        }
        return PropertyMappingDefinition(name: name, valueExpression: nil)
    }

    /// The expression Xcode generates for a relationship mapped through another entity mapping.
    static func defaultRelationshipExpression(name: String, through entityMapping: String) -> String {
        let path = (try? ArchivedExpression.keyPath(base: .variable("source"), path: name).text()) ?? "$source.\(name)"
        return "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \(formatString(entityMapping)), \(path))"
    }

    static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
        return text
    }
}
