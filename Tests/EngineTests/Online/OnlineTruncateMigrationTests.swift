import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 12: writes the row triggers of `apply --online` do not see by themselves, made while
/// a lightweight step runs: a `TRUNCATE` of a table the step copies rows or links out of, and
/// a row whose `_entity` the application changes to or from an entity leaving the table. Each
/// is made at a chosen point of the step (between two of its transactions), in the live store
/// and identically in a copy that stays at the first version; the step then ends equal to an
/// offline migration of that copy, catalog and rows.
/// Proves Planning/Changes: CopyRows, FillJoinTable, DeleteRows (with
/// Online/OnlineTruncates.swift).
@Suite(integration) struct OnlineTruncateMigrationTests {
    typealias S = MigratedStore
    static let shadow = OnlineMigrationTests.shadow

    /// Dog leaves Animal's table for its own; Cat stays: the dogs are mirrored into their new
    /// table, the rows that stay into a shadow of animal.
    static func dogLeaves() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {bark: string}}\nCat: {parent: Animal, attributes: {lives: int16}}")),
            ("v2", S.version("Animal: {attributes: {name: string}}\nDog: {attributes: {name: string, bark: string}}\nCat: {parent: Animal, attributes: {lives: int16}}")),
        ])
    }

    /// Applies `model` online over a store of 300 rows per entity and its first-version copy;
    /// `act` writes both (through the writer's `both` and `insert`, on a session of its own)
    /// once, at the first event `when` accepts. The store ends as an offline migration of the
    /// copy, with no trigger or function of the step left.
    static func migrate(
        _ model: VersionedModel, allowDataLoss: Bool = false, when: @escaping (ProgressEvent) -> Bool,
        act: @escaping (TwinWriter, PostgresConnection) throws -> Void, then check: (PostgresConnection) throws -> Void = { _ in }
    ) throws {
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: Self.shadow, write: { _, _ in }) { connection, writer, url in
            let session = try PostgresConnection(url: url)
            defer { session.close() }
            var acted = false
            var failure: Error?
            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(
                options: ApplyOptions(allowDataLoss: allowDataLoss, batchSize: 7, online: true),
                onProgress: { event in
                    guard !acted, when(event) else { return }
                    acted = true
                    do { try act(writer, session) } catch { failure = error }
                }
            )
            #expect(acted, "the step never reached the point where the test writes")
            #expect(failure == nil, "the test's writes failed: \(String(describing: failure))")
            #expect(try S.version(on: connection) == "v2")
            try check(connection)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: allowDataLoss, on: connection)
            let left = try connection.execute("""
                SELECT tgname AS name FROM pg_trigger WHERE tgname LIKE 'orchestrator\\_online\\_%'
                UNION ALL SELECT proname FROM pg_proc WHERE proname LIKE 'orchestrator\\_online\\_%'
                UNION ALL SELECT relname FROM pg_class WHERE relname LIKE 'orchestrator\\_online\\_%'
                """).rows.compactMap { $0[0] }
            #expect(left == [], "left behind: \(left)")
        }
    }

    /// The event before phase `prefix` of the step starts.
    static func before(_ prefix: String) -> (ProgressEvent) -> Bool {
        { $0.kind == .passStarted && $0.stage == .online && $0.phase?.hasPrefix(prefix) == true }
    }

    /// The event after a batch of phase `prefix` once `rows` rows are done.
    static func during(_ prefix: String, after rows: Int) -> (ProgressEvent) -> Bool {
        { $0.kind == .rows && $0.stage == .online && $0.phase?.hasPrefix(prefix) == true && $0.rowsDone >= rows }
    }

    /// Animal truncated, then a dog, a cat and an animal inserted in the same transaction.
    static func truncateAnimals(_ w: TwinWriter, _ session: PostgresConnection) throws {
        try session.transaction {
            try w.both({ "TRUNCATE \(ident: $0, "animal")" }, on: session)
            try w.insert(into: "animal", columns: ["_entity", "name", "bark"], values: { _ in "'Dog', 'after', 'woof'" }, on: session)
            try w.insert(into: "animal", columns: ["_entity", "name", "lives"], values: { _ in "'Cat', 'after', 3" }, on: session)
            try w.insert(into: "animal", columns: ["_entity", "name"], values: { _ in "'Animal', 'after'" }, on: session)
        }
    }

    static func expectOnlyRowsWrittenAfterTheTruncate(_ connection: PostgresConnection) throws {
        #expect(try connection.execute("SELECT count(*) AS n FROM shop.animal").int(0, "n") == 2)
        #expect(try connection.execute("SELECT count(*) AS n FROM shop.dog").int(0, "n") == 1)
    }

    /// Once the dogs are in their table and the rows that stay in the shadow, a truncate of
    /// animal clears both: neither the old dogs nor the old animals come back at the switch-over.
    @Test func aTruncateOfTheTableAnEntityLeavesAfterItsRowsWereCopiedLeavesNoneOfThem() throws {
        try Self.migrate(try Self.dogLeaves(), when: Self.before("switch over"), act: Self.truncateAnimals, then: Self.expectOnlyRowsWrittenAfterTheTruncate)
    }

    /// The same in the middle of the shadow's batches: the batches after it find the table empty.
    @Test func aTruncateWhileTheRowsThatStayAreCopiedLeavesNoneOfThem() throws {
        try Self.migrate(
            try Self.dogLeaves(), when: Self.during("copy the rows of animal that stay", after: 100),
            act: Self.truncateAnimals, then: Self.expectOnlyRowsWrittenAfterTheTruncate
        )
    }

    /// After every batch passed them: animals and cats made dogs, dogs made cats and animals.
    /// The dogs made leave the shadow for the dogs' table; the dogs unmade leave it for the shadow.
    @Test func aRowWhoseEntityChangesToOrFromTheEntityLeavingMovesWithIt() throws {
        try Self.migrate(try Self.dogLeaves(), when: Self.before("switch over"), act: { w, session in
            // The sample rows: animals 1-300, dogs 301-600, cats 601-900.
            try w.both({ "UPDATE \(ident: $0, "animal") SET _entity = 'Dog', bark = 'made', lives = NULL WHERE _pk IN (5, 6, 650)" }, on: session)
            try w.both({ "UPDATE \(ident: $0, "animal") SET _entity = 'Cat', bark = NULL, lives = 4 WHERE _pk = 310" }, on: session)
            try w.both({ "UPDATE \(ident: $0, "animal") SET _entity = 'Animal', bark = NULL WHERE _pk = 311" }, on: session)
        }, then: { (connection: PostgresConnection) throws in
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.dog WHERE _pk IN (5, 6, 650, 310, 311)").int(0, "n") == 3)
            #expect(try connection.execute("SELECT string_agg(_entity, ',' ORDER BY _pk) AS e FROM shop.animal WHERE _pk IN (5, 6, 650, 310, 311)").value(0, "e") == "Cat,Animal")
        })
    }

    /// A toy's animal made a dog once the links to dogs were cleared, whatever the key's delete
    /// rule: before the key pointing at the shadow is added (which would find the link
    /// dangling) and after (whose delete rule would act on the toy): the toy's link is cleared
    /// as offline.
    @Test(arguments: [nil, "cascade", "deny"], ["foreign key toy.animal_pk -> orchestrator_online_shadow_", "switch over"])
    func aRowTurnedIntoTheEntityLeavingLosesTheLinksToItAsOffline(rule: String?, phase: String) throws {
        let model = try rule.map { try OnlineShadowReferenceMigrationTests.cascadingModel(rule: $0) } ?? OnlineShadowReferenceMigrationTests.model()
        try Self.migrate(model, allowDataLoss: true, when: Self.before(phase), act: { w, session in
            try w.both({ "UPDATE \(ident: $0, "toy") SET animal_pk = 5 WHERE _pk IN (1, 2)" }, on: session)
            try w.both({ "UPDATE \(ident: $0, "animal") SET _entity = 'Dog', bark = 'made' WHERE _pk = 5" }, on: session)
        }, then: { (connection: PostgresConnection) throws in
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.toy WHERE _pk IN (1, 2) AND animal_pk IS NULL").int(0, "n") == 2)
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.dog WHERE _pk = 5").int(0, "n") == 1)
        })
    }

    /// Dessert's many-to-many moved down to Cake and Pie: once the links are copied, a cake
    /// with links becomes a pie, a pie a dessert and a dessert with links a cake; the links go
    /// with their owner into the join table of its new entity.
    @Test func aRowChangingEntityTakesItsLinksToTheJoinTableOfItsNewEntity() throws {
        try Self.migrate(try LinksMovedDownMigrationTests.model(inverse: true), allowDataLoss: true, when: Self.before("switch over"), act: { w, session in
            let first = { (entity: String) throws -> Int64 in
                try #require(session.execute("SELECT min(_pk) AS n FROM shop.dessert WHERE _entity = \(entity)").int(0, "n"))
            }
            let (cake, pie, dessert) = (try first("Cake"), try first("Pie"), try first("Dessert"))
            for owner in [cake, pie, dessert] {
                try w.both({ "INSERT INTO \(ident: $0, "dessert__tags") (dessert_pk, tags_pk) VALUES (\(owner), 1), (\(owner), 2) ON CONFLICT DO NOTHING" }, on: session)
            }
            try w.both({ "UPDATE \(ident: $0, "dessert") SET _entity = 'Pie' WHERE _pk = \(cake)" }, on: session)
            try w.both({ "UPDATE \(ident: $0, "dessert") SET _entity = 'Dessert' WHERE _pk = \(pie)" }, on: session)
            try w.both({ "UPDATE \(ident: $0, "dessert") SET _entity = 'Cake' WHERE _pk = \(dessert)" }, on: session)
        })
    }

    /// An animal made a dog just before the switch-over, once a toy's link to it was added in
    /// a join table, or a staying animal's mother link to it (the table's own key): the link
    /// goes (the join table's row deleted, the mother cleared), as offline.
    @Test(arguments: ["join", "mother"])
    func aRowTurnedIntoTheEntityLeavingLosesItsJoinTableAndOwnKeyLinksAsOffline(key: String) throws {
        let model = key == "join"
            ? try OnlineMovedJoinLinksMigrationTests.model(animal: "Animal: {attributes: {name: string}}", toy: "Toy: {attributes: {label: string}, relationships: {animals: {destination: Animal, toMany: true}}}")
            : try OnlineMovedRowLinksMigrationTests.motherModel(rule: "nullify")
        try Self.migrate(model, allowDataLoss: true, when: Self.before("switch over"), act: { w, session in
            if key == "join" {
                try w.both({ "INSERT INTO \(ident: $0, "toy__animals") (toy_pk, animals_pk) VALUES (1, 5), (2, 5), (2, 6) ON CONFLICT DO NOTHING" }, on: session)
            } else {
                try w.both({ "UPDATE \(ident: $0, "animal") SET mother_pk = 5 WHERE _pk IN (1, 2)" }, on: session)
            }
            try w.both({ "UPDATE \(ident: $0, "animal") SET _entity = 'Dog', bark = 'made' WHERE _pk = 5" }, on: session)
        })
    }

    /// A to-one made to-many: once the links are copied into the new join table, recipe is
    /// truncated (its ingredients with it, through their key) and refilled: the join table
    /// holds only the links written after.
    @Test func aTruncateOfATableWhoseLinksMovedIntoAJoinTableClearsThem() throws {
        try Self.migrate(try OnlineMigrationTests.model(), when: Self.afterThePhase("copy links from recipe"), act: { w, session in
            try session.transaction {
                try w.both({ "TRUNCATE \(ident: $0, "recipe") CASCADE" }, on: session)
                for cuisine in [1, 2, 2] {
                    try w.insert(into: "recipe", columns: ["_entity", "name", "cuisine_pk"], values: { _ in "'Recipe', 'after', \(literal: cuisine)" }, on: session)
                }
                try w.insert(into: "ingredient", columns: ["_entity", "name", "recipe_pk"], values: { "'Ingredient', 'salt', (SELECT max(_pk) FROM \(ident: $0, "recipe"))" }, on: session)
            }
        }, then: { (connection: PostgresConnection) throws in
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe").int(0, "n") == 3)
        })
    }

    /// A one-to-one whose column moves from alpha to beta: once the links are copied into
    /// beta's new column, alpha is truncated and refilled: beta's column holds only the links
    /// written after.
    @Test func aTruncateOfTheTableAOneToOneLeavesClearsTheLinksCopiedOut() throws {
        try Self.migrate(try OnlineRowMoveMigrationTests.oneToOneSides(), when: Self.afterThePhase("copy links from"), act: { w, session in
            let renamed = try session.execute("SELECT to_regclass('shop.zeta') IS NOT NULL AS renamed").bool(0, "renamed") == true
            let live = renamed ? "zeta" : "alpha"
            try session.transaction {
                try w.both({ "TRUNCATE \(ident: $0, $0 == w.live ? live : "alpha")" }, on: session)
                for beta in [7, 8] {
                    try w.insert(into: "alpha", liveTable: live, columns: ["_entity", "name", "partner_pk"], values: { _ in "'Alpha', 'after', \(literal: beta)" }, on: session)
                }
            }
        }, then: { (connection: PostgresConnection) throws in
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.beta WHERE alpha_pk IS NOT NULL").int(0, "n") == 2)
        })
    }

    /// In a REPEATABLE READ transaction the truncate could not see the copies committed since
    /// its snapshot: it is refused, naming the table, and nothing changes.
    @Test func aTruncateInARepeatableReadTransactionIsRefusedNamingTheTable() throws {
        try Self.migrate(try Self.dogLeaves(), when: Self.before("switch over"), act: { _, session in
            try session.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            defer { _ = try? session.execute("ROLLBACK") }
            _ = try session.execute("SELECT count(*) FROM shop.dog")
            let refusal = #expect(throws: PostgresError.self) { try session.execute("TRUNCATE shop.animal") }
            #expect(refusal?.sqlState == "55000")
            #expect(refusal?.message.contains("TRUNCATE of shop.animal while apply --online runs a step on it") == true, "\(String(describing: refusal))")
        }, then: { (connection: PostgresConnection) throws in
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.dog").int(0, "n") == 300)
        })
    }

    /// The event before the phase that follows the first phase starting with `prefix`.
    static func afterThePhase(_ prefix: String) -> (ProgressEvent) -> Bool {
        var passed: Int?
        return { event in
            guard event.stage == .online, event.kind == .passStarted else { return false }
            if passed == nil, event.phase?.hasPrefix(prefix) == true { passed = event.pass }
            return passed.map { event.pass == $0 + 1 } ?? false
        }
    }
}
