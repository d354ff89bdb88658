import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 12: `apply --online` of positions numbered across rows (a to-many made ordered,
/// links moved into a join table in an order the source did not keep) while the application
/// adds, moves and deletes links of owners the batches numbered already and of owners they
/// have not reached; the migrated store equals an offline migration of the same final data,
/// positions included.
/// Proves Planning/Changes: FillOrderColumn, FillJoinTable (with Online/OnlinePositions.swift).
@Suite(integration) struct OnlinePositionMigrationTests {
    typealias S = MigratedStore
    typealias Columns = OnlineColumnMigrationTests

    static func cuisines(_ recipes: String, _ cuisine: String) -> String {
        S.version("""
            Cuisine: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: \(cuisine), toMany: true\(recipes)}}}
            Recipe: {attributes: {name: string}, relationships: {\(cuisine): {destination: Cuisine, inverse: recipes\(cuisine == "cuisine" ? "" : ", toMany: true, renamingIdentifier: cuisine")}}}
            """)
    }

    /// The first version's application: recipes linked to cuisines through Recipe's to-one,
    /// inserted, moved to another cuisine or none, deleted, and cuisines inserted and deleted;
    /// with `order`, the position Recipe keeps beside the link is written too, alone or with it.
    static func writeCuisineLinks(order: String? = nil) -> TwinWriter.Write {
        { writer, connection in
            let (recipe, cuisine, position) = (writer.random(1...420), writer.random(1...340), Int64(writer.random(0...20)))
            let link: SQLValue = writer.random(0...4) == 0 ? .null : .int(Int64(cuisine))
            let setPosition: SQL = order.map { ", \(ident: $0) = \(position)" } ?? ""
            switch writer.random(0...7) {
            case 0, 1:
                let exists = try connection.execute("SELECT 1 FROM \(ident: writer.live, "cuisine") WHERE _pk = \(cuisine)").rows.isEmpty == false
                let positioned = order.map { [($0, SQLValue.int(position))] } ?? []
                try Columns.insert("recipe", [("_entity", .text("Recipe")), ("name", .text("new")), ("cuisine_pk", exists ? link : .null)] + positioned, writer: writer, on: connection)
            case 2, 3:
                try writer.both({
                    "UPDATE \(ident: $0, "recipe") SET cuisine_pk = (SELECT _pk FROM \(ident: $0, "cuisine") WHERE _pk = \(link)), name = name || '!'\(setPosition) WHERE _pk = \(recipe)"
                }, on: connection)
            case 4:
                try writer.both({ "UPDATE \(ident: $0, "recipe") SET name = name || '?'\(setPosition) WHERE _pk = \(recipe)" }, on: connection)
            case 5:
                try writer.delete(from: "recipe", key: recipe, on: connection)
            case 6:
                try writer.delete(from: "cuisine", key: cuisine, on: connection)
            default:
                try Columns.insert("cuisine", [("_entity", .text("Cuisine")), ("name", .text("fusion"))], writer: writer, on: connection)
            }
        }
    }

    /// Cuisine.recipes, kept by Recipe's to-one column, made ordered: every cuisine's recipes
    /// numbered from 0 by `_pk` in Recipe's new order column.
    @Test func aToManyMadeOrderedNumbersEveryOwnersLinksAsOfflineWhileTheyAreWritten() throws {
        let model = try S.model([("v1", Self.cuisines("", "cuisine")), ("v2", Self.cuisines(", ordered: true", "cuisine"))])
        try Columns.migrateOnlineWhileWriting(model, write: Self.writeCuisineLinks())
    }

    /// Recipe.cuisine made to-many: the links move into a join table, where Cuisine.recipes,
    /// unordered before, is ordered: each cuisine's recipes numbered there once copied.
    @Test func linksMovedIntoAJoinTableAreNumberedAsOfflineWhileTheyAreWritten() throws {
        let model = try S.model([("v1", Self.cuisines("", "cuisine")), ("v2", Self.cuisines(", ordered: true", "cuisines"))])
        try Columns.migrateOnlineWhileWriting(model, write: Self.writeCuisineLinks())
    }

    /// Recipe.tags, a many-to-many, made ordered: the join table's new order column numbered
    /// while the application adds and removes links and deletes recipes and tags.
    @Test func aManyToManyMadeOrderedNumbersItsJoinTableAsOfflineWhileLinksAreWritten() throws {
        let tags = { (ordered: Bool) in
            S.version("""
                Recipe: {attributes: {name: string}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true, ordered: \(ordered)}}}
                Tag: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
                """)
        }
        let model = try S.model([("v1", tags(false)), ("v2", tags(true))])
        let join = try #require(StoreLayout(version: model.versions[0], schema: S.store).tables.first { !$0.kind.isHierarchy })
        let (owner, target) = (join.columns[0].name, join.columns[1].name)
        try Columns.migrateOnlineWhileWriting(model, prepare: { connection in
            let links = try connection.execute("SELECT count(*) FROM \(ident: S.store, join.name)").rows.first?.first ?? nil
            #expect((Int(links ?? "0") ?? 0) > 300, "the recipes hold few links: their positions prove little")
        }, write: TwinWriter.writeLinks(
            in: join.name, owner: .init(table: "recipe", column: owner, keys: 1...420), target: .init(table: "tag", column: target, keys: 1...420)
        ) { writer, connection in
            let (table, entity) = [("recipe", "Recipe"), ("tag", "Tag")][writer.random(0...1)]
            try Columns.insert(table, [("_entity", .text(entity)), ("name", .text("new"))], writer: writer, on: connection)
        })
    }

    /// Recipe renamed Treat: Tag now owns the many-to-many, so its links are read from the join
    /// table Recipe owned (`recipe__tags`, which the application writes until the switch-over)
    /// into `tag__recipes`, where Tag.recipes, made ordered, numbers each tag's treats. With
    /// Recipe.tags ordered, each link's position among its recipe's tags is copied along (the
    /// application writes it: alone, it moves the link).
    @Test(arguments: [false, true])
    func linksReadFromAJoinTableTheOtherSideOwnedAreCopiedAndNumberedAsOfflineWhileWritten(ordered: Bool) throws {
        let model = try S.model([
            ("v1", S.version("""
                Recipe: {attributes: {name: string}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true, ordered: \(ordered)}}}
                Tag: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
                """)),
            ("v2", S.version("""
                Treat: {renamingIdentifier: Recipe, attributes: {name: string}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true, ordered: \(ordered)}}}
                Tag: {attributes: {name: string}, relationships: {recipes: {destination: Treat, inverse: tags, toMany: true, ordered: true}}}
                """)),
        ])
        try Columns.migrateOnlineWhileWriting(model, write: { writer, connection in
            let (recipe, tag, position) = (writer.random(1...420), writer.random(1...420), writer.random(0...30))
            let renamed = try connection.execute("SELECT to_regclass(\(writer.live + ".treat")) IS NOT NULL").rows.first?.first == "t"
            let recipes = { (store: String) in store == writer.live && renamed ? "treat" : "recipe" }
            let (positionColumn, positionValue): (SQL, SQL) = ordered ? (", tags_order", ", \(position)") : ("", "")
            switch writer.random(0...6) {
            case 0, 1, 2:
                try writer.both({
                    """
                    INSERT INTO \(ident: $0, "recipe__tags") (recipe_pk, tags_pk\(positionColumn)) \
                    SELECT r._pk, t._pk\(positionValue) FROM \(ident: $0, recipes($0)) r, \(ident: $0, "tag") t \
                    WHERE r._pk = \(recipe) AND t._pk = \(tag) ON CONFLICT DO NOTHING
                    """
                }, on: connection)
            case 3 where ordered:
                try writer.both({ "UPDATE \(ident: $0, "recipe__tags") SET tags_order = \(position) WHERE recipe_pk = \(recipe)" }, on: connection)
            case 3:
                try writer.both({ "DELETE FROM \(ident: $0, "recipe__tags") WHERE tags_pk = \(tag) AND recipe_pk = (SELECT min(recipe_pk) FROM \(ident: $0, "recipe__tags") WHERE tags_pk = \(tag))" }, on: connection)
            case 4:
                try writer.both({ "DELETE FROM \(ident: $0, recipes($0)) WHERE _pk = \(recipe)" }, on: connection)
            case 5:
                try writer.delete(from: "tag", key: tag, on: connection)
            default:
                try Columns.insert("tag", [("_entity", .text("Tag")), ("name", .text("new"))], writer: writer, on: connection)
            }
        })
    }

    /// The switch-over cannot get its lock and the run stops there: the trigger and the log
    /// table stay on the live store and keep logging the owners written while no run is
    /// active; `apply --restart` (plain) continues, numbers them and leaves neither behind.
    @Test func aRunInterruptedBeforeTheSwitchOverKeepsLoggingAndARestartNumbersWhatWasWrittenMeanwhile() throws {
        let model = try S.model([("v1", Self.cuisines("", "cuisine")), ("v2", Self.cuisines(", ordered: true", "cuisine"))])
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: OnlineMigrationTests.shadow, write: Self.writeCuisineLinks()) { connection, writer, _ in
            let failure = try writer.interruptedOnlineApply(model, .atProgress { blocker, event in
                if event.kind == .passStarted, event.stage == .online, event.pass == event.passCount {
                    _ = try? blocker.execute("BEGIN; LOCK TABLE \(ident: S.store, "recipe") IN ROW EXCLUSIVE MODE")
                }
            }, on: connection)
            #expect(failure?.statement?.summary.hasPrefix("drop trigger orchestrator_online_positions_") == true, "\(String(describing: failure?.statement))")
            #expect(try S.version(on: connection) == "v1")
            let logs = try connection.execute("SELECT relname FROM pg_class WHERE relname LIKE 'orchestrator_online_owners_%' AND relkind = 'r' AND relnamespace = to_regnamespace(\(S.store))")
            let log = try #require(logs.rows.first?.first ?? nil, "the interrupted run's log table is on the live store")
            let before = writer.commits
            writer.waitForCommits(before + 20)
            let logged = try connection.execute("SELECT count(*) FROM \(ident: S.store, log)").rows.first?.first ?? nil
            #expect((Int(logged ?? "0") ?? 0) > 0, "the writes made while no run was active are logged")

            let report = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(restart: true, batchSize: 7))
            writer.stop()
            #expect(report.appliedSteps.count == 1)
            #expect(writer.failure == nil, "a write failed before the switch-over: \(String(describing: writer.failure))")
            #expect(try connection.execute("SELECT to_regclass(\(S.store + "." + log))::text").rows.first?.first == .some(nil), "the log table is dropped")
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, on: connection)
        }
    }

    /// Dog leaves Animal's hierarchy with the toys it inherited: its links are read from
    /// Animal's join table, for dogs only, into a join table of its own, while the application
    /// adds and removes links of dogs and animals and deletes either.
    @Test func linksOfAnEntityLeavingItsHierarchyAreReadFromItsParentsJoinTableWhileWritten() throws {
        let model = try S.model([
            ("v1", S.version("Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}\nDog: {parent: Animal}\nToy: {attributes: {name: string}}")),
            ("v2", S.version("""
                Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}
                Dog: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}
                Toy: {attributes: {name: string}}
                """)),
        ])
        let write = TwinWriter.writeLinks(
            in: "animal__toys", owner: .init(table: "animal", column: "animal_pk", keys: 1...700), target: .init(table: "toy", column: "toys_pk", keys: 1...360)
        ) { writer, connection in
            let (entity, name) = [("Dog", "rex"), ("Animal", "cat")][writer.random(0...1)]
            try Columns.insert("animal", [("_entity", .text(entity)), ("name", .text(name))], writer: writer, on: connection)
        }
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: OnlineMigrationTests.shadow, write: write) { connection, writer, _ in
            try OnlineRowMoveMigrationTests.migrateWhileWriting(model, writer: writer, on: connection)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, on: connection)
        }
    }
}
