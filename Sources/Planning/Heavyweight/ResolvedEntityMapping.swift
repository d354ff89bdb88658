import Foundation
import Mapping
import ObjectModel

/// One entity mapping made ready for the set-based path: the defaults Xcode generates filled
/// in, every expression parsed and type-checked, and the store's tables and columns named.
struct ResolvedEntityMapping: Sendable {
    var name: String
    var sourceEntity: String
    var sourceTable: String
    /// `_entity` values of the source rows it reads: the source entity and its sub-entities
    /// that no other entity mapping reads.
    var sourceEntities: [String]
    var destinationEntity: String
    var destinationTable: String
    var filter: CheckedPredicate?
    var attributes: [MappedColumn]
    var toOneLinks: [ToOneLink]
    var toManyLinks: [ToManyLink]
    /// The custom entity migration policy, registered under this name.
    var policy: String?

    /// The destination rows keep their source rows' keys: the association of this entity
    /// mapping is a view over the source table, and stage 1 needs no key of its own
    /// (`HeavyweightMigration.keepingSourceKeys` decides).
    var keepsSourceKeys = false
    /// To-one columns set by the stage 1 INSERT itself, through an association already there.
    var linkedInStageOne: Set<String> = []
    /// Of those, the columns whose linked rows keep their keys, every one of them: the source
    /// row's key is the link, no association needed.
    var linkedByKey: Set<String> = []

    /// A policy, or an attribute computed by a policy function: rows stream through Swift.
    var needsSwift: Bool { policy != nil || attributes.contains { $0.expression.needsSwift } }

    struct MappedColumn: Sendable {
        var column: String
        var expression: CheckedExpression
    }

    /// A destination to-one column set in stage 2: the destination row made by entity mapping
    /// `mappingName` from the source row at the end of `sourcePath` (to-one relationships).
    struct ToOneLink: Sendable {
        var column: String
        var mappingName: String
        var sourcePath: [String]
        /// The position column of the inverse, an ordered to-many that no entity mapping maps:
        /// the positions are then numbered from this side, by key (else that side places them).
        var orderColumn: String?
    }

    /// Destination links kept outside the row's own columns, set in stage 2 from this side:
    /// the row made by this entity mapping from source row s is paired with the row entity
    /// mapping `mappingName` made from each source object at `sourcePath` (to-one steps, the
    /// last one to-one or to-many). A to-one kept by its inverse's column (one-to-one) is set
    /// the same way, as a to-many of at most one.
    struct ToManyLink: Sendable {
        enum Storage: Sendable {
            /// A join table: this side's row in `ownColumn`, the linked row in `otherColumn`.
            case joinTable(table: String, ownColumn: String, otherColumn: String)
            /// The inverse's to-one column, in the table of the linked rows.
            case inverseColumn(table: String, column: String)

            /// The join table `owner` keeps for its `relationship`: seen from the owner's side, its
            /// rows are in the owner's column; seen from the inverse's, in the relationship's.
            static func joinTable(ownedBy owner: String, relationship: String, seenFromInverse: Bool) -> Storage {
                let ownerColumn = StoreNaming.foreignKeyColumnName(relationship: owner)
                let linkedColumn = StoreNaming.foreignKeyColumnName(relationship: relationship)
                return .joinTable(
                    table: StoreNaming.joinTableName(entity: owner, relationship: relationship),
                    ownColumn: seenFromInverse ? linkedColumn : ownerColumn,
                    otherColumn: seenFromInverse ? ownerColumn : linkedColumn
                )
            }
        }

        var relationship: String
        var storage: Storage
        /// Where an ordered relationship keeps each linked row's position.
        var orderColumn: String?
        var mappingName: String
        var sourcePath: [String]
    }
}

/// Why a mapping model cannot run set-based, one reason per entity mapping and property.
struct HeavyweightRefusal: Error, Sendable {
    var reasons: [String]
}

extension ResolvedEntityMapping {
    /// 1. `add` creates nothing from rows and `remove` reads nothing: nil; nor does a custom
    ///    mapping naming no entity and no policy (Xcode's blank "Mapping").
    /// 2. A custom policy must be registered by the running program; it and attributes calling
    ///    policy functions make the mapping stream through Swift.
    /// 3. Attributes: the expression written, else `$source.<name>` when the source entity has
    ///    an attribute of the same (canonical) name, else nothing (the column's default).
    /// 4. Relationships: the expression written, else through the entity mapping that reads the
    ///    source relationship's destination and makes the destination relationship's; to-one
    ///    columns are linked in stage 2, then join tables and inverses' columns from this side
    ///    (a mapping may map only one side of a relationship).
    static func resolve(
        _ definition: EntityMappingDefinition, in mapping: MappingModel, source: ModelVersion, destination: ModelVersion,
        registeredPolicies: Set<String> = []
    ) throws(HeavyweightRefusal) -> ResolvedEntityMapping? {
        guard definition.type != .add, definition.type != .remove else { return nil }
        if definition.sourceEntity == nil, definition.destinationEntity == nil, definition.policy == nil { return nil }
        let name = definition.name
        func refusal(_ text: String) -> HeavyweightRefusal {
            HeavyweightRefusal(reasons: ["\(mapping.file): entity mapping \(name): \(text)"])
        }
        if let policy = definition.policy, !registeredPolicies.contains(policy) {
            let known = registeredPolicies.isEmpty ? "none is registered" : "registered: \(registeredPolicies.sorted().joined(separator: ", "))"
            throw refusal("custom policy '\(policy)' is not registered (\(known)); build an orchestrator executable that registers it, see docs/custom-policies.md")
        }
        guard let sourceEntity = definition.sourceEntity.flatMap({ source.entity(named: $0) }),
              let destinationEntity = definition.destinationEntity.flatMap({ destination.entity(named: $0) }) else {
            throw refusal("needs a source and a destination entity that exist in '\(source.name)' and '\(destination.name)'")
        }
        let checker = ExpressionChecker(entityMapping: definition, entityMappings: mapping.entityMappings, source: source, destination: destination)
        let columns = destination.propertyColumns
        var resolved = ResolvedEntityMapping(
            name: name, sourceEntity: sourceEntity.name, sourceTable: StoreNaming.tableName(entity: source.root(of: sourceEntity).name),
            sourceEntities: sourceEntities(of: sourceEntity, for: definition, in: mapping, source: source),
            destinationEntity: destinationEntity.name,
            destinationTable: StoreNaming.tableName(entity: destination.root(of: destinationEntity).name),
            filter: nil, attributes: [], toOneLinks: [], toManyLinks: [], policy: definition.policy
        )
        var reasons: [String] = []
        do {
            if let filter = definition.filter {
                resolved.filter = try checker.checkFilter(try ExpressionParser.parsePredicate(filter))
            }
        } catch {
            reasons.append("filter: \(oneLine(error))")
        }
        let sourceAttributes = source.allAttributes(of: sourceEntity).filter { !$0.isTransient }
        let attributes = destination.allAttributes(of: destinationEntity).filter { !$0.isTransient }
        for property in definition.attributeMappings where !attributes.contains(where: { $0.name == property.name }) {
            reasons.append("\(destinationEntity.name) has no stored attribute '\(property.name)'")
        }
        for attribute in attributes {
            let written = definition.attributeMappings.first { $0.name == attribute.name }?.valueExpression
            guard let text = written ?? sourceAttributes.first(where: { $0.canonicalName == attribute.canonicalName })
                .map({ ValueExpression.keyPath(.source, [$0.name]).description }) else { continue }
            do {
                let checked = try checker.check(try ExpressionParser.parseExpression(text), destinationAttribute: attribute)
                resolved.attributes.append(MappedColumn(column: columns.column(ofProperty: attribute.name, of: destinationEntity, in: destination)!, expression: checked))
            } catch {
                reasons.append("attribute '\(attribute.name)': \(oneLine(error))")
            }
        }
        let relationships = destination.allRelationships(of: destinationEntity).filter { !$0.isTransient }
        for property in definition.relationshipMappings where !relationships.contains(where: { $0.name == property.name }) {
            reasons.append("\(destinationEntity.name) has no stored relationship '\(property.name)'")
        }
        for relationship in relationships {
            let written = definition.relationshipMappings.first { $0.name == relationship.name }?.valueExpression
            guard let text = written ?? defaultRelationshipExpression(for: relationship, from: sourceEntity, in: mapping, source: source, destination: destination) else { continue }
            let declaring = destination.ancestry(of: destinationEntity).last { $0.relationships.contains(relationship) } ?? destinationEntity
            let storage = StoreLayout.storage(of: relationship, in: declaring, version: destination)
            do {
                let checked = try checker.checkRelationship(try ExpressionParser.parseExpression(text), destinationRelationship: relationship)
                guard case .destinationInstances(let mappingName, let path) = checked else {
                    reasons.append("relationship '\(relationship.name)': \(text) gives the related objects by a policy function; set relationships in the policy's createRelationships hook instead")
                    continue
                }
                switch storage {
                case .column:
                    let unplacedOrder = destination.inverse(of: relationship).map { inverse in
                        inverse.isToMany && inverse.isOrdered && !isMapped(inverse, in: mapping, source: source, destination: destination)
                    } ?? false
                    resolved.toOneLinks.append(ToOneLink(
                        column: columns.column(ofProperty: relationship.name, declaredBy: declaring.name)!, mappingName: mappingName, sourcePath: path,
                        orderColumn: unplacedOrder ? columns.orderColumn(ofToOne: relationship.name, declaredBy: declaring.name) : nil
                    ))
                case .joinTable, .inverseJoinTable, .inverseColumn:
                    resolved.toManyLinks.append(toManyLink(
                        relationship, declaredBy: declaring, storage: storage, mappingName: mappingName, sourcePath: path, destination: destination, columns: columns
                    ))
                case .none:
                    break
                }
            } catch {
                reasons.append("relationship '\(relationship.name)': \(oneLine(error))")
            }
        }
        if !reasons.isEmpty { throw HeavyweightRefusal(reasons: reasons.map { refusal($0).reasons[0] }) }
        return resolved
    }

    /// Where a relationship not kept in its own row's column is stored, named as `StoreLayout`
    /// names it: the join table this entity or its inverse owns, or the inverse's column (which
    /// has the order column beside it).
    private static func toManyLink(
        _ relationship: Relationship, declaredBy declaring: Entity, storage: StoreLayout.RelationshipStorage,
        mappingName: String, sourcePath: [String], destination: ModelVersion, columns: PropertyColumns
    ) -> ToManyLink {
        let inverse = destination.inverse(of: relationship)
        let linked: ToManyLink.Storage
        var order = StoreNaming.orderColumnName(relationship: relationship.name)
        switch (storage, inverse, destination.entity(named: relationship.destination)) {
        case (.joinTable, _, _):
            linked = .joinTable(ownedBy: declaring.name, relationship: relationship.name, seenFromInverse: false)
        case (.inverseJoinTable, let inverse?, let target?):
            let owner = destination.ancestry(of: target).last { $0.relationships.contains(inverse) } ?? target
            linked = .joinTable(ownedBy: owner.name, relationship: inverse.name, seenFromInverse: true)
        case (.inverseColumn, let inverse?, let target?):
            let holder = destination.ancestry(of: target).last { $0.relationships.contains(inverse) } ?? target
            linked = .inverseColumn(
                table: StoreNaming.tableName(entity: destination.root(of: target).name),
                column: columns.column(ofProperty: inverse.name, declaredBy: holder.name)!
            )
            order = columns.orderColumn(ofToOne: inverse.name, declaredBy: holder.name) ?? order
        default:
            preconditionFailure("\(relationship.name): a to-one in its own column is a ToOneLink; one stored by its inverse has one")
        }
        return ToManyLink(
            relationship: relationship.name, storage: linked,
            orderColumn: relationship.isOrdered && relationship.isToMany ? order : nil,
            mappingName: mappingName, sourcePath: sourcePath
        )
    }

    /// The source entity and those of its sub-entities no other entity mapping reads, so that
    /// a hierarchy mapped entity by entity is not copied twice.
    private static func sourceEntities(of entity: Entity, for definition: EntityMappingDefinition, in mapping: MappingModel, source: ModelVersion) -> [String] {
        let readElsewhere = Set(mapping.entityMappings.filter { $0.name != definition.name && $0.type != .add }.compactMap(\.sourceEntity))
        return source.hierarchy(of: entity).filter { candidate in
            candidate.name == entity.name
                || !source.ancestry(of: candidate).dropFirst(source.ancestry(of: entity).count).contains { readElsewhere.contains($0.name) }
        }.map(\.name)
    }

    /// Whether an entity mapping making objects that have `relationship` sets it: written, or
    /// by Xcode's default.
    private static func isMapped(_ relationship: Relationship, in mapping: MappingModel, source: ModelVersion, destination: ModelVersion) -> Bool {
        mapping.entityMappings.contains { candidate in
            guard candidate.type != .add, candidate.type != .remove,
                  let read = candidate.sourceEntity.flatMap({ source.entity(named: $0) }),
                  let made = candidate.destinationEntity.flatMap({ destination.entity(named: $0) }),
                  destination.allRelationships(of: made).contains(relationship) else { return false }
            return candidate.relationshipMappings.contains { $0.name == relationship.name }
                || defaultRelationshipExpression(for: relationship, from: read, in: mapping, source: source, destination: destination) != nil
        }
    }

    /// Xcode's default for a destination relationship: the source relationship of the same
    /// (canonical) name, through the entity mapping that reads its destination's hierarchy and
    /// makes the destination relationship's entity (the one reading exactly that entity first).
    private static func defaultRelationshipExpression(
        for relationship: Relationship, from sourceEntity: Entity, in mapping: MappingModel, source: ModelVersion, destination: ModelVersion
    ) -> String? {
        guard let sourceRelationship = source.allRelationships(of: sourceEntity).first(where: { !$0.isTransient && $0.canonicalName == relationship.canonicalName }),
              let sourceTarget = source.entity(named: sourceRelationship.destination) else { return nil }
        let sourceRoot = source.root(of: sourceTarget).name
        let fitting = mapping.entityMappings.filter { candidate in
            guard candidate.type != .add, candidate.type != .remove,
                  let read = candidate.sourceEntity.flatMap({ source.entity(named: $0) }), source.root(of: read).name == sourceRoot,
                  let made = candidate.destinationEntity.flatMap({ destination.entity(named: $0) }) else { return false }
            return destination.ancestry(of: made).contains { $0.name == relationship.destination }
        }
        guard let chosen = fitting.first(where: { $0.sourceEntity == sourceTarget.name }) ?? fitting.first else { return nil }
        return ValueExpression.function(
            target: .variable(.manager), selector: ValueExpression.destinationInstancesSelector,
            arguments: [.constant(.string(chosen.name)), .keyPath(.source, [sourceRelationship.name])]
        ).description
    }
}

func oneLine(_ error: Error) -> String {
    if let checkError = error as? ExpressionCheckError {
        return checkError.message + (checkError.keyPath.map { " (\($0))" } ?? "") + ": " + checkError.expression
    }
    return String(describing: error).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
}

extension ResolvedEntityMapping {
    /// The tables stage 2's `part` of this entity mapping writes: its own table for its to-one
    /// columns; join tables and the inverses' columns' tables for its other links.
    func tablesFilledInStageTwo(_ part: PlannedPass.Part) -> Set<String> {
        guard part == .toMany else { return toOneLinks.isEmpty ? [] : [destinationTable] }
        return Set(toManyLinks.map { link in
            switch link.storage {
            case .joinTable(let table, _, _), .inverseColumn(let table, _): table
            }
        })
    }
}
