import ObjectModel

/// Checks one entity mapping's expressions against the source and destination versions at
/// plan time: key paths exist (through to-one relationships only), types fit the destination
/// property, and what needs Swift is marked as such.
public struct ExpressionChecker: Sendable {
    public let entityMapping: EntityMappingDefinition
    /// Every entity mapping of the mapping model, to resolve the names given to
    /// `destinationInstancesForEntityMappingNamed:sourceInstances:`.
    public let entityMappings: [EntityMappingDefinition]
    public let source: ModelVersion
    public let destination: ModelVersion

    public init(
        entityMapping: EntityMappingDefinition, entityMappings: [EntityMappingDefinition], source: ModelVersion,
        destination: ModelVersion
    ) {
        self.entityMapping = entityMapping
        self.entityMappings = entityMappings
        self.source = source
        self.destination = destination
    }

    /// Checks the value expression of a destination attribute.
    public func check(_ expression: ValueExpression, destinationAttribute: Attribute) throws(ExpressionCheckError) -> CheckedExpression {
        let site = Site(checker: self, property: destinationAttribute.name, expression: expression.description)
        guard let destinationType = ValueType(destinationAttribute.type), !destinationAttribute.isTransient else {
            throw site.failure("attribute '\(destinationAttribute.name)' is transient: it has no column to fill")
        }
        let node = try site.value(expression)
        try site.checkStorable(node, in: destinationAttribute, as: destinationType)
        let references = uniqued(node.attributeReferences)
        return CheckedExpression(
            expression: expression, destination: destinationAttribute, attributes: references,
            joins: toOneJoins(for: references), node: node
        )
    }

    /// The to-one relationships behind the references, each path once, shortest first.
    func toOneJoins(for references: [AttributeReference]) -> [ToOneJoin] {
        var joins: [ToOneJoin] = []
        for reference in references {
            guard var entity = sourceEntity else { break }
            for (depth, name) in reference.relationships.enumerated() {
                guard let relationship = source.allRelationships(of: entity).first(where: { $0.name == name }),
                      let next = source.entity(named: relationship.destination) else { break }
                let path = Array(reference.relationships[...depth])
                if !joins.contains(where: { $0.path == path }) {
                    joins.append(ToOneJoin(path: path, entity: entity.name, relationship: relationship))
                }
                entity = next
            }
        }
        return joins.enumerated().sorted { ($0.element.path.count, $0.offset) < ($1.element.path.count, $1.offset) }.map(\.element)
    }

    var sourceEntity: Entity? {
        entityMapping.sourceEntity.flatMap { source.entity(named: $0) }
    }
}
