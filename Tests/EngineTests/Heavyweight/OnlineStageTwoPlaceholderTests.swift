import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// A required to-one linked by stage 2 (the linked entity mapping comes later and makes new
/// keys), under a uniqueness constraint: a round after stage 3's build inserts the rows with
/// placeholders (`RequiredLinkPlaceholders`), which must differ from row to row, and stage 2
/// links them; a link still missing under the guard stops the step.
@Suite(integration) struct OnlineStageTwoPlaceholderTests {
    typealias S = MigratedStore
    typealias Guarded = OnlineGuardedChecksTests

    static func model() throws -> VersionedModel {
        func version(required: Bool) -> String {
            S.version("""
                Chef: {attributes: {name: string}, relationships: {cards: {destination: Card, inverse: owner, toMany: true}}}
                Card: {attributes: {title: string}, relationships: {owner: {destination: Chef, inverse: cards\(required ? ", optional: false" : "")}}, uniquenessConstraints: [[owner]]}
                """)
        }
        return try S.model([("v1", version(required: false)), ("v2", version(required: true))])
    }

    /// The cards first, and chefs made from cards too: the chef table gets new keys through
    /// the association, so the cards' owners are linked by stage 2.
    static let mapping = MappingModel(source: "v1", destination: "v2", entityMappings: [
        EntityMappingDefinition(name: "CardToCard", type: .copy, sourceEntity: "Card", destinationEntity: "Card"),
        EntityMappingDefinition(name: "ChefToChef", type: .copy, sourceEntity: "Chef", destinationEntity: "Chef"),
        EntityMappingDefinition(
            name: "CardToChef", type: .transform, sourceEntity: "Card", destinationEntity: "Chef",
            attributeMappings: [PropertyMappingDefinition(name: "name", valueExpression: "$source.title")]
        ),
    ], file: "cards.yaml")

    static func withFilledStore(_ body: (VersionedModel, PostgresConnection) throws -> Void) throws {
        let model = try Self.model()
        try S.withStore(model, rows: 0) { connection in
            try connection.execute("INSERT INTO shop.chef (_pk, _entity, name) SELECT i, 'Chef', 'chef ' || i FROM generate_series(1, 50) AS i")
            try connection.execute("INSERT INTO shop.card (_pk, _entity, title, owner_pk) SELECT i, 'Card', 'card ' || i, i FROM generate_series(1, 50) AS i")
            try body(model, connection)
        }
    }

    static func migrator(_ model: VersionedModel, on connection: PostgresConnection) -> StoreMigrator {
        StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(mapping)])
    }

    /// The chefs by name and the cards (which keep their keys) with their owner's name: the
    /// chefs' new keys depend on the order the association gave them.
    static func snapshot(on connection: PostgresConnection) throws -> [String] {
        try connection.execute("SELECT 'chef ' || name AS line FROM shop.chef ORDER BY 1").rows.compactMap { $0[0] }
            + connection.execute("""
                SELECT concat_ws(' | ', c._pk, c.title, o.name) AS line FROM shop.card AS c LEFT JOIN shop.chef AS o ON o._pk = c.owner_pk ORDER BY c._pk
                """).rows.compactMap { $0[0] }
    }

    static func applyOnline(_ model: VersionedModel, on connection: PostgresConnection, writing writes: [SQL]) throws {
        var hookFailure: Error?
        defer { #expect(hookFailure == nil, "\(String(describing: hookFailure))") }
        _ = try migrator(model, on: connection).apply(options: Guarded.onlineOptions(), onProgress: { event in
            guard event.kind == .passFinished, event.stage == .build else { return }
            do {
                for write in writes { try connection.execute(write) }
            } catch {
                hookFailure = error
            }
        })
    }

    @Test func cardsMadeAgainAfterTheBuildHoldDistinctPlaceholdersUntilLinkedAndGiveTheOfflineStore() throws {
        let writes: [SQL] = [
            "UPDATE shop.card SET title = title || ' retitled' WHERE _pk IN (1, 2, 3)",
            "DELETE FROM shop.card WHERE _pk = 40",
            "UPDATE shop.card SET owner_pk = 40 WHERE _pk = 4",
        ]
        var reference: (rows: [String], catalog: [String]) = ([], [])
        try Self.withFilledStore { model, connection in
            for write in writes { try connection.execute(write) }
            _ = try Self.migrator(model, on: connection).apply()
            reference = (try Self.snapshot(on: connection), try S.catalog(of: S.store, on: connection))
        }
        try Self.withFilledStore { model, connection in
            let step = try #require(try Self.migrator(model, on: connection).plan().steps.first)
            #expect(step.statements.contains { $0.summary.hasPrefix("stage 2, CardToCard: card.owner_pk") }, "the owners are linked by stage 2")
            try Self.applyOnline(model, on: connection, writing: writes)
            #expect(try S.version(on: connection) == "v2")
            #expect(try S.catalog(of: S.store, on: connection) == reference.catalog)
            let online = try Self.snapshot(on: connection)
            TwinComparison.expectSameRows(online, reference.rows)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.card WHERE owner_pk < 0").int(0, "n") == 0)
        }
    }

    @Test func aCardLeftWithoutOwnerAfterTheBuildStopsTheStepUnderTheGuard() throws {
        try Self.withFilledStore { (model: VersionedModel, connection: PostgresConnection) throws in
            let failure = #expect(throws: StepFailure.self) {
                try Self.applyOnline(model, on: connection, writing: ["UPDATE shop.card SET owner_pk = NULL WHERE _pk IN (7, 8)"])
            }
            #expect((failure?.underlying as? PostgresError)?.sqlState == .notNullViolation, "\(String(describing: failure))")
            #expect(String(describing: failure).contains("2 rows of card whose owner_pk is null (NOT NULL); first _pk: 7, 8"), "\(String(describing: failure))")
            #expect(try S.version(on: connection) == "v1")
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.card WHERE owner_pk IS NULL").int(0, "n") == 2)
        }
    }
}
