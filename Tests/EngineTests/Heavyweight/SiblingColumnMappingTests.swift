import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// A mapping model between versions whose sibling sub-entities each declare a to-one `owner` to
/// another entity and a `score` of another type (one column each, docs/store-format.md
/// "Columns of a hierarchy"): the staged engine reads and writes those columns, every link and
/// value kept.
@Suite(integration) struct SiblingColumnMappingTests {
    typealias S = MigratedStore

    static func version(_ title: String) -> String {
        S.version("""
            Person: {attributes: {name: string}}
            Team: {attributes: {name: string}}
            Group: {abstract: true, attributes: {\(title): string}}
            Joined: {parent: Group, attributes: {score: int32}, relationships: {owner: {destination: Person}}}
            Owned: {parent: Group, attributes: {score: string}, relationships: {owner: {destination: Team}}}
            """)
    }

    static func groupMapping(_ entity: String, owner: String) -> EntityMappingDefinition {
        EntityMappingDefinition(
            name: "\(entity)To\(entity)", type: .transform, sourceEntity: entity, destinationEntity: entity,
            attributeMappings: [PropertyMappingDefinition(name: "heading", valueExpression: "$source.title")],
            relationshipMappings: [
                PropertyMappingDefinition(name: "owner", valueExpression: #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "\#(owner)To\#(owner)", $source.owner)"#),
            ]
        )
    }

    /// Each group's entity, title, scores and owner's name, by `_pk`.
    static func owners(title: String, in schema: String, on connection: PostgresConnection) throws -> [[String?]] {
        try connection.execute("""
            SELECT g._pk, g._entity, g.\(ident: title), g.score_integer, g.score_text, p.name AS person, t.name AS team FROM \(ident: schema, "group") g
            LEFT JOIN \(ident: schema, "person") p ON p._pk = g.owner_person_pk LEFT JOIN \(ident: schema, "team") t ON t._pk = g.owner_team_pk
            ORDER BY g._pk
            """).rows
    }

    /// Rows without their `_pk`, ordered by title.
    static func byTitle(_ rows: [[String?]]) -> [[String?]] {
        let withoutKeys: [[String?]] = rows.map { Array($0.dropFirst()) }
        return withoutKeys.sorted { (left: [String?], right: [String?]) -> Bool in (left[1] ?? "") < (right[1] ?? "") }
    }

    @Test func aMappingModelKeepsTheLinksAndValuesOfSiblingPropertiesInTheirOwnColumns() throws {
        let model = try S.model([("v1", Self.version("title")), ("v2", Self.version("heading"))])
        let mapping = MappingModel(source: "v1", destination: "v2", entityMappings: [
            EntityMappingDefinition(name: "PersonToPerson", type: .copy, sourceEntity: "Person", destinationEntity: "Person"),
            EntityMappingDefinition(name: "TeamToTeam", type: .copy, sourceEntity: "Team", destinationEntity: "Team"),
            Self.groupMapping("Joined", owner: "Person"),
            Self.groupMapping("Owned", owner: "Team"),
        ], file: "sibling-owners.yaml")
        try S.withStore(model) { connection in
            let before = try Self.owners(title: "title", in: S.store, on: connection)
            #expect(before.contains { $0[1] == "Joined" && $0[3] != nil && $0[5] != nil } && before.contains { $0[1] == "Owned" && $0[4] != nil && $0[6] != nil })
            let migrator = StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(mapping)])
            _ = try migrator.apply()
            let after = try Self.owners(title: "heading", in: S.store, on: connection)
            // Keys may be renumbered by the staged engine: compare by title.
            #expect(Self.byTitle(after) == Self.byTitle(before))
            try S.expectFollowsContract(model, on: connection)
        }
    }
}
