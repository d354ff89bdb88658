import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Under the write guard, `apply --online` checks only the rows written after stage 3's build
/// (`OnlineStageThree`, `TouchedRows`, `RequiredLinkPlaceholders`): a required to-one, a
/// to-one required for a sub-entity, to-many counts kept in a column and in a join table, and
/// a join table's foreign keys. Writes made after the build that break each one stop the step
/// with the store unchanged; writes keeping them give the store an offline migration gives.
@Suite(integration) struct OnlineGuardedChecksTests {
    typealias S = MigratedStore

    static func model() throws -> VersionedModel {
        func version(required: Bool, label: Bool) -> String {
            let requiredText = required ? ", optional: false" : ""
            let recipes = required ? ", minCount: 1, maxCount: 3" : ""
            let tags = required ? ", minCount: 1, maxCount: 3" : ""
            return S.version("""
                Chef: {attributes: {name: string\(label ? ", label: string" : "")}, relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true\(recipes)}, tasted: {destination: Dessert, inverse: taster, toMany: true}, cards: {destination: Card, inverse: owner, toMany: true}}}
                Card: {attributes: {title: string}, relationships: {owner: {destination: Chef, inverse: cards\(requiredText)}}, uniquenessConstraints: [[owner]]}
                Recipe: {attributes: {name: string}, relationships: {chef: {destination: Chef, inverse: recipes\(requiredText)}, tags: {destination: Tag, inverse: recipes, toMany: true\(tags)}}}
                Dessert: {parent: Recipe, attributes: {sweetness: int16}, relationships: {taster: {destination: Chef, inverse: tasted\(requiredText)}}}
                Tag: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
                """)
        }
        return try S.model([("v1", version(required: false, label: false)), ("v2", version(required: true, label: true))])
    }

    /// The cards first: their owners are linked in stage 2, after the chefs are made.
    static let mapping = MappingModel(source: "v1", destination: "v2", entityMappings: [
        EntityMappingDefinition(name: "CardToCard", type: .copy, sourceEntity: "Card", destinationEntity: "Card"),
        EntityMappingDefinition(
            name: "ChefToChef", type: .transform, sourceEntity: "Chef", destinationEntity: "Chef",
            attributeMappings: [PropertyMappingDefinition(name: "label", valueExpression: "$source.name")]
        ),
        EntityMappingDefinition(name: "RecipeToRecipe", type: .copy, sourceEntity: "Recipe", destinationEntity: "Recipe"),
        EntityMappingDefinition(name: "DessertToDessert", type: .copy, sourceEntity: "Dessert", destinationEntity: "Dessert"),
        EntityMappingDefinition(name: "TagToTag", type: .copy, sourceEntity: "Tag", destinationEntity: "Tag"),
    ], file: "guarded.yaml")

    /// 200 chefs with two recipes each (odd keys plain recipes, even keys desserts, tasted by
    /// the next chef), 50 tags, two tags per recipe, a card for each of the first 100 chefs:
    /// every count, required link and uniqueness holds.
    static let fill: [SQL] = [
        "INSERT INTO shop.chef (_pk, _entity, name) SELECT i, 'Chef', 'chef ' || i FROM generate_series(1, 200) AS i",
        "INSERT INTO shop.tag (_pk, _entity, name) SELECT i, 'Tag', 'tag ' || i FROM generate_series(1, 50) AS i",
        """
        INSERT INTO shop.recipe (_pk, _entity, name, chef_pk, taster_pk, sweetness)
        SELECT i, CASE WHEN i % 2 = 0 THEN 'Dessert' ELSE 'Recipe' END, 'recipe ' || i, (i - 1) / 2 + 1,
               CASE WHEN i % 2 = 0 THEN (i / 2) % 200 + 1 END, CASE WHEN i % 2 = 0 THEN i % 7 END
        FROM generate_series(1, 400) AS i
        """,
        "INSERT INTO shop.recipe__tags (recipe_pk, tags_pk) SELECT i, i % 50 + 1 FROM generate_series(1, 400) AS i",
        "INSERT INTO shop.recipe__tags (recipe_pk, tags_pk) SELECT i, (i + 1) % 50 + 1 FROM generate_series(1, 400) AS i",
        "INSERT INTO shop.card (_pk, _entity, title, owner_pk) SELECT i, 'Card', 'card ' || i, i FROM generate_series(1, 100) AS i",
        "SELECT setval(pg_get_serial_sequence('shop.card', '_pk'), 100)",
        "SELECT setval(pg_get_serial_sequence('shop.chef', '_pk'), 200)",
        "SELECT setval(pg_get_serial_sequence('shop.tag', '_pk'), 50)",
        "SELECT setval(pg_get_serial_sequence('shop.recipe', '_pk'), 400)",
    ]

    static func withFilledStore(_ body: (VersionedModel, PostgresConnection) throws -> Void) throws {
        let model = try Self.model()
        try S.withStore(model, rows: 0) { connection in
            for statement in Self.fill { try connection.execute(statement) }
            try body(model, connection)
        }
    }

    static func migrator(_ model: VersionedModel, on connection: PostgresConnection) -> StoreMigrator {
        StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(mapping)])
    }

    static func onlineOptions() -> ApplyOptions {
        var options = ApplyOptions()
        options.online = true
        options.catchUpRemainder = 0
        return options
    }

    /// Every row of every table of `schema`, as JSON text, sorted.
    static func snapshot(_ schema: String, on connection: PostgresConnection) throws -> [String] {
        let tables = try connection.execute("SELECT tablename FROM pg_tables WHERE schemaname = \(schema) ORDER BY tablename").rows.compactMap { $0[0] }
        return try tables.flatMap { table in
            try connection.execute("SELECT \(literal: table) || ' ' || to_jsonb(t)::text AS line FROM \(ident: schema, table) AS t ORDER BY 1").rows.compactMap { $0[0] }
        }
    }

    /// Runs `apply --online`, making `writes` once stage 3's build has committed, and
    /// `stagingWrites` in the staging schema as a round makes them (as a replica); `written`
    /// gets the old store's rows right after.
    static func applyOnline(
        _ model: VersionedModel, on connection: PostgresConnection, writing writes: [SQL], stagingWrites: [SQL] = [],
        written: ([String]) -> Void = { _ in }
    ) throws {
        var hookFailure: Error?
        defer { #expect(hookFailure == nil, "\(String(describing: hookFailure))") }
        _ = try migrator(model, on: connection).apply(options: onlineOptions(), onProgress: { event in
            guard event.kind == .passFinished, event.stage == .build else { return }
            do {
                for write in writes { try connection.execute(write) }
                if !stagingWrites.isEmpty {
                    try connection.transaction {
                        try connection.execute(OnlineStageThree.withoutForeignKeys)
                        for write in stagingWrites { try connection.execute(write) }
                    }
                }
                written(try snapshot(S.store, on: connection))
            } catch {
                hookFailure = error
            }
        })
    }

    /// After the build: a recipe moved between chefs (both keep a count in bounds), a recipe
    /// and a dessert inserted with their links, a dessert given another taster, a tag link
    /// replaced, a recipe deleted (its links go by the old store's cascade), a chef renamed, a
    /// tag deleted with its links after its recipes got another one, cards retitled.
    static let validWrites: [SQL] = [
        "DELETE FROM shop.recipe WHERE _pk = 9",
        "UPDATE shop.recipe SET chef_pk = 5 WHERE _pk = 11",
        "INSERT INTO shop.recipe (_pk, _entity, name, chef_pk) VALUES (401, 'Recipe', 'late recipe', 6)",
        "INSERT INTO shop.recipe (_pk, _entity, name, chef_pk, taster_pk, sweetness) VALUES (402, 'Dessert', 'late dessert', 100, 3, 2)",
        "INSERT INTO shop.recipe__tags (recipe_pk, tags_pk) VALUES (401, 7), (402, 8), (402, 9)",
        "UPDATE shop.recipe SET taster_pk = 150 WHERE _pk = 20",
        "DELETE FROM shop.recipe__tags WHERE recipe_pk = 30 AND tags_pk = 32",
        "INSERT INTO shop.recipe__tags (recipe_pk, tags_pk) VALUES (30, 40)",
        "UPDATE shop.chef SET name = 'renamed after the build' WHERE _pk = 12",
        "INSERT INTO shop.recipe__tags (recipe_pk, tags_pk) SELECT recipe_pk, 48 FROM shop.recipe__tags WHERE tags_pk = 50",
        // Cards made again in one round, their owners linked in its stage 2: each placeholder
        // differs, under the uniqueness constraint over the owner.
        "UPDATE shop.card SET title = title || ' retitled' WHERE _pk IN (1, 2, 3)",
        "DELETE FROM shop.tag WHERE _pk = 50",
    ]

    @Test func writesKeepingEveryCheckAfterTheBuildGiveTheOfflineStore() throws {
        var reference: (rows: [String], catalog: [String]) = ([], [])
        try Self.withFilledStore { model, connection in
            for write in Self.validWrites { try connection.execute(write) }
            _ = try Self.migrator(model, on: connection).apply()
            reference = (try Self.snapshot(S.store, on: connection), try S.catalog(of: S.store, on: connection))
        }
        try Self.withFilledStore { model, connection in
            try Self.applyOnline(model, on: connection, writing: Self.validWrites)
            #expect(try S.version(on: connection) == "v2")
            #expect(try connection.execute("""
                SELECT count(*) AS n FROM pg_proc WHERE pronamespace = 'shop'::regnamespace
                """).int(0, "n") == 0, "no trigger function of the migration is left in the store")
            try OnlineHeavyweightTests.expectNoTriggersLeft(on: connection)
            #expect(try S.catalog(of: S.store, on: connection) == reference.catalog)
            let online = try Self.snapshot(S.store, on: connection)
            TwinComparison.expectSameRows(online, reference.rows)
            #expect(online.contains { $0.hasPrefix("recipe ") && $0.contains("\"name\": \"late dessert\"") })
        }
    }

    @Test func aRunCrashedAfterTheBuildResumesWithItsLogAndGivesTheOfflineStore() throws {
        let (early, late) = (Array(Self.validWrites.prefix(5)), Array(Self.validWrites.dropFirst(5)))
        var reference: [String] = []
        try Self.withFilledStore { model, connection in
            for write in Self.validWrites { try connection.execute(write) }
            _ = try Self.migrator(model, on: connection).apply()
            reference = try Self.snapshot(S.store, on: connection)
        }
        try Self.withFilledStore { (model: VersionedModel, connection: PostgresConnection) throws in
            // The session is killed once the build has committed and rounds mapped `early`.
            let killed = try OnlineHeavyweightTests.crashOnlineRun(options: Self.onlineOptions(), on: connection, { Self.migrator(model, on: $0) }, onEvent: { event in
                if event.kind == .passFinished, event.stage == .build {
                    for write in early { _ = try? connection.execute(write) }
                }
            }, crashesAt: { $0.stage == .writeGuard && $0.kind == .passStarted })
            #expect(killed)
            #expect(try S.version(on: connection) == "v1")
            #expect(try connection.execute("""
                SELECT to_regclass('"shop~staging"._touched_rows') IS NOT NULL AS built
                """).bool(0, "built") == true, "the build committed before the crash")
            for write in late { try connection.execute(write) }
            _ = try Self.migrator(model, on: connection).apply(options: Self.onlineOptions())
            #expect(try S.version(on: connection) == "v2")
            try OnlineHeavyweightTests.expectNoTriggersLeft(on: connection)
            let online = try Self.snapshot(S.store, on: connection)
            TwinComparison.expectSameRows(online, reference)
        }
    }

    /// A violation made after the build, the error it stops the step with, and what the
    /// message names.
    struct Violation: Sendable, CustomTestStringConvertible {
        var name: String
        var writes: [SQL]
        /// A round's own write to the staging schema (as a replica, as a round runs), for
        /// what the application cannot do to the old store, whose foreign keys act.
        var stagingWrites: [SQL] = []
        var sqlState: SQLState
        var message: String
        var testDescription: String { name }
    }

    static let violations: [Violation] = [
        Violation(
            name: "a required to-one left null", writes: ["UPDATE shop.recipe SET chef_pk = NULL WHERE _pk = 15"],
            sqlState: .notNullViolation, message: "1 rows of recipe whose chef_pk is null (NOT NULL); first _pk: 15"
        ),
        Violation(
            name: "a to-one required for a sub-entity left null", writes: ["UPDATE shop.recipe SET taster_pk = NULL WHERE _pk = 16"],
            sqlState: .checkViolation, message: "1 rows of recipe whose taster_pk is null (check recipe_taster_pk_required); first _pk: 16"
        ),
        Violation(
            name: "a to-many count broken in the owner the links left", writes: ["UPDATE shop.recipe SET chef_pk = 21 WHERE _pk = 39", "UPDATE shop.recipe SET chef_pk = 22 WHERE _pk = 40"],
            sqlState: .checkViolation, message: "1 rows of Chef whose recipes does not hold 1 to 3 objects; first _pk: 20"
        ),
        Violation(
            name: "a to-many count broken in the owner the links joined", writes: ["UPDATE shop.recipe SET chef_pk = 30 WHERE _pk IN (41, 43)"],
            sqlState: .checkViolation, message: "1 rows of Chef whose recipes does not hold 1 to 3 objects; first _pk: 30"
        ),
        Violation(
            name: "a to-many count in a join table broken", writes: ["DELETE FROM shop.recipe__tags WHERE recipe_pk = 77"],
            sqlState: .checkViolation, message: "1 rows of Recipe whose tags does not hold 1 to 3 objects; first _pk: 77"
        ),
        Violation(
            name: "a join table link to a deleted row", writes: [], stagingWrites: [
                // The staging tables keep their row counts (a resumed run checks them).
                "DELETE FROM \"shop~staging\".tag WHERE _pk = 33", "INSERT INTO \"shop~staging\".tag (_pk, _entity, name) VALUES (1000, 'Tag', 'stand-in')",
            ],
            sqlState: .foreignKeyViolation, message: "rows of recipe__tags whose tags_pk names no row of tag"
        ),
        Violation(
            name: "a join table link written to no row", writes: [], stagingWrites: [
                "DELETE FROM \"shop~staging\".recipe__tags WHERE recipe_pk = 6 AND tags_pk = 7",
                "INSERT INTO \"shop~staging\".recipe__tags (recipe_pk, tags_pk) VALUES (5, 999999)",
            ],
            sqlState: .foreignKeyViolation, message: "1 rows of recipe__tags whose tags_pk names no row of tag"
        ),
    ]

    @Test(arguments: violations)
    func aViolationWrittenAfterTheBuildStopsTheStepUnderTheGuardNamingItWithTheStoreUnchanged(_ violation: Violation) throws {
        try Self.withFilledStore { (model: VersionedModel, connection: PostgresConnection) throws in
            var written: [String] = []
            let failure = #expect(throws: StepFailure.self) {
                try Self.applyOnline(model, on: connection, writing: violation.writes, stagingWrites: violation.stagingWrites) { written = $0 }
            }
            #expect((failure?.underlying as? PostgresError)?.sqlState == violation.sqlState, "\(String(describing: failure))")
            #expect(String(describing: failure).contains(violation.message), "\(String(describing: failure))")
            #expect(try S.version(on: connection) == "v1")
            // The old store holds what the application wrote, nothing of the migration.
            #expect(!written.isEmpty)
            #expect(try Self.snapshot(S.store, on: connection) == written)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == 400)
        }
    }
}
