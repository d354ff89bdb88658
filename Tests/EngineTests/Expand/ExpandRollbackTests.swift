import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// `rollback` after `apply --expand`: a store at v1 with rows, expanded to v2, written by both
/// releases (the old one through the views, the new one on the tables), rolled back; it equals,
/// row for row and object for object, a twin that stayed at v1 and received the same writes in
/// v1's shape. One test per kind of change the expand step serves, then the refusals.
@Suite(integration) struct ExpandRollbackTests {
    typealias S = MigratedStore
    static let shadow = "shadow"
    static let views = "shop@v1"

    /// One write made to the live store, through v1's views (`old`) or v2's tables, and the same
    /// write in v1's shape to the twin; `$pk` in `twin` is the key the live statement returned.
    struct Write {
        var old: Bool
        var live: String
        var twin: String
    }

    static func old(_ live: String, twin: String? = nil) -> Write { Write(old: true, live: live, twin: twin ?? live) }
    static func new(_ live: String, twin: String) -> Write { Write(old: false, live: live, twin: twin) }

    static func expand(_ model: VersionedModel, on connection: PostgresConnection) throws {
        var options = ApplyOptions(allowDataLoss: true, online: true)
        options.expand = true
        _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: options)
        #expect(try ExpansionRecord.read(store: S.store, on: connection) != nil)
    }

    static func run(_ writes: [Write], on connection: PostgresConnection) throws {
        for write in writes {
            let key = try connection.transaction {
                try connection.execute("SET LOCAL search_path = \(ident: write.old ? views : S.store)")
                return try connection.execute(SQL(unsafeRaw: write.live)).rows.first?.first ?? nil
            }
            try connection.transaction {
                try connection.execute("SET LOCAL search_path = \(ident: shadow)")
                try connection.execute(SQL(unsafeRaw: write.twin.replacingOccurrences(of: "$pk", with: key ?? "NULL")))
            }
        }
    }

    /// Expand, write, roll back, compare with the twin; the rollback lost nothing and is
    /// recorded.
    static func expectRollbackKeepsEveryWrite(_ model: VersionedModel, writes: [Write], twinAtExpand: String? = nil) throws {
        try ShadowedStore.with(model, store: S.store, shadow: shadow) { connection, _ in
            try expand(model, on: connection)
            if let twinAtExpand { try connection.execute(SQL(unsafeRaw: twinAtExpand)) }
            try run(writes, on: connection)
            let report = try ExpansionRollback(connection: connection, store: S.store).rollBack()
            #expect(report.version == "v1" && report.fromVersion == "v2" && !report.isDryRun)
            #expect(report.losses.allSatisfy { $0.rows == 0 }, "\(report.losses)")
            #expect(try S.version(on: connection) == "v1")
            #expect(try ExpansionRecord.read(store: S.store, on: connection) == nil)
            #expect(try connection.execute("SELECT 1 FROM pg_namespace WHERE nspname = \(views)").rows.isEmpty)
            #expect(try S.history(on: connection).suffix(2) == ["expand v1 -> v2 succeeded", "rollback v2 -> v1 succeeded"])
            try TwinComparison.expectSameStore(S.store, asOfflineTwin: shadow, on: connection)
        }
    }

    @Test func aRenamedAttributeAnAddedOneAndARemovedOneGoBackWithEveryWrite() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, rating: int16, note: string}}")),
            ("v2", S.version("Recipe: {attributes: {title: {type: string, renamingIdentifier: name}, rating: int16, servings: {type: int32, optional: false, default: 2}}}")),
        ])
        try Self.expectRollbackKeepsEveryWrite(model, writes: [
            Self.old("INSERT INTO recipe (_entity, name, rating) VALUES ('Recipe', 'old', 4) RETURNING _pk",
                     twin: "INSERT INTO recipe (_pk, _entity, name, rating) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Recipe', 'old', 4)"),
            Self.old("UPDATE recipe SET name = name || '+', rating = 1 WHERE _pk <= 10"),
            Self.old("DELETE FROM recipe WHERE _pk BETWEEN 11 AND 13"),
            Self.new("INSERT INTO recipe (_entity, title, rating) VALUES ('Recipe', 'new', 5) RETURNING _pk",
                     twin: "INSERT INTO recipe (_pk, _entity, name, rating) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Recipe', 'new', 5)"),
            Self.new("INSERT INTO recipe (_entity, title, rating, servings) VALUES ('Recipe', 'new, two', 2, 2) RETURNING _pk",
                     twin: "INSERT INTO recipe (_pk, _entity, name, rating) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Recipe', 'new, two', 2)"),
            Self.new("UPDATE recipe SET title = title || '*' WHERE _pk BETWEEN 5 AND 20", twin: "UPDATE recipe SET name = name || '*' WHERE _pk BETWEEN 5 AND 20"),
            Self.new("DELETE FROM recipe WHERE _pk = 30", twin: "DELETE FROM recipe WHERE _pk = 30"),
        ])
    }

    @Test func anAttributeMadeRequiredWithADefaultGoesBackOptional() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: true}}}")),
            ("v2", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: false, default: 3}}}")),
        ])
        // The backfill of the expansion stays: rows that had no rating have the default.
        try Self.expectRollbackKeepsEveryWrite(model, writes: [
            Self.old("INSERT INTO recipe (_entity, name, rating) VALUES ('Recipe', 'old', 4) RETURNING _pk",
                     twin: "INSERT INTO recipe (_pk, _entity, name, rating) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Recipe', 'old', 4)"),
            Self.old("UPDATE recipe SET rating = 1 WHERE _pk <= 10"),
            Self.new("INSERT INTO recipe (_entity, name) VALUES ('Recipe', 'new') RETURNING _pk",
                     twin: "INSERT INTO recipe (_pk, _entity, name, rating) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Recipe', 'new', 3)"),
            Self.new("UPDATE recipe SET rating = 5 WHERE _pk BETWEEN 20 AND 25", twin: "UPDATE recipe SET rating = 5 WHERE _pk BETWEEN 20 AND 25"),
        ], twinAtExpand: "UPDATE \(Self.shadow).recipe SET rating = 3 WHERE rating IS NULL")
    }

    @Test func aRenamedEntityGoesBackWithItsRowsAndTheNewReleasesRows() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string}}")),
            ("v2", S.version("Dish: {renamingIdentifier: Recipe, attributes: {name: string}}")),
        ])
        try Self.expectRollbackKeepsEveryWrite(model, writes: [
            Self.old("INSERT INTO recipe (name) VALUES ('old') RETURNING _pk",
                     twin: "INSERT INTO recipe (_pk, _entity, name) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Recipe', 'old')"),
            Self.old("UPDATE recipe SET name = name || '+' WHERE _pk <= 10"),
            Self.new("INSERT INTO dish (_entity, name) VALUES ('Dish', 'new') RETURNING _pk",
                     twin: "INSERT INTO recipe (_pk, _entity, name) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Recipe', 'new')"),
            Self.new("DELETE FROM dish WHERE _pk = 40", twin: "DELETE FROM recipe WHERE _pk = 40"),
        ])
    }

    /// v2 removes a required attribute with a default and a to-one: their drops are deferred,
    /// so their columns are still there; the new release's rows get the default, and the links
    /// to a chef it deleted are cleared, as v1's Nullify rule would have.
    @Test func removedAttributesAndLinksComeBackWithTheirConstraints() throws {
        let model = try S.model([
            ("v1", S.version("""
                Recipe: {attributes: {name: string, code: {type: string, optional: false, default: x}}, relationships: {chef: {destination: Chef, inverse: recipes}}}
                Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, toMany: true, inverse: chef}}}
                """)),
            ("v2", S.version("""
                Recipe: {attributes: {name: string}}
                Chef: {attributes: {name: string}}
                """)),
        ])
        try Self.expectRollbackKeepsEveryWrite(model, writes: [
            Self.old("INSERT INTO recipe (_entity, name) VALUES ('Recipe', 'old') RETURNING _pk",
                     twin: "INSERT INTO recipe (_pk, _entity, name) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Recipe', 'old')"),
            Self.new("INSERT INTO recipe (_entity, name) VALUES ('Recipe', 'new') RETURNING _pk",
                     twin: "INSERT INTO recipe (_pk, _entity, name) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Recipe', 'new')"),
            Self.new("UPDATE recipe SET name = 'renamed' WHERE _pk BETWEEN 1 AND 5", twin: "UPDATE recipe SET name = 'renamed' WHERE _pk BETWEEN 1 AND 5"),
            Self.new("DELETE FROM chef WHERE _pk IN (SELECT chef_pk FROM recipe WHERE chef_pk IS NOT NULL ORDER BY _pk LIMIT 2)",
                     twin: "DELETE FROM chef WHERE _pk IN (SELECT chef_pk FROM recipe WHERE chef_pk IS NOT NULL ORDER BY _pk LIMIT 2)"),
        ])
    }

    /// v2 makes a to-many ordered: the step back drops the order column, the links stay.
    @Test func aToManyMadeOrderedGoesBackUnorderedWithItsLinks() throws {
        let manyToMany = { (ordered: String) in S.version("""
            Recipe: {attributes: {name: string}, relationships: {tags: {destination: Tag, inverse: recipes, toMany: true\(ordered)}}}
            Tag: {attributes: {label: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
            """) }
        let model = try S.model([("v1", manyToMany("")), ("v2", manyToMany(", ordered: true"))])
        let table = StoreNaming.joinTableName(entity: "Recipe", relationship: "tags")
        try Self.expectRollbackKeepsEveryWrite(model, writes: [
            Self.old("INSERT INTO tag (_entity, label) VALUES ('Tag', 'old') RETURNING _pk",
                     twin: "INSERT INTO tag (_pk, _entity, label) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Tag', 'old')"),
            Self.old("DELETE FROM \(table) WHERE recipe_pk = 1"),
            Self.new("DELETE FROM \(table) WHERE recipe_pk = 2", twin: "DELETE FROM \(table) WHERE recipe_pk = 2"),
        ])
    }

    /// v2 widens a number: a value the new release wrote beyond v1's type stops the rollback,
    /// whatever the flags, until it is changed.
    @Test func aValueTheNarrowedTypeCannotHoldStopsTheRollback() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, rating: int16}}")),
            ("v2", S.version("Recipe: {attributes: {name: string, rating: int32}}")),
        ])
        try ShadowedStore.with(model, store: S.store, shadow: Self.shadow) { connection, _ in
            try Self.expand(model, on: connection)
            try connection.execute("UPDATE shop.recipe SET rating = 40000 WHERE _pk = 7")
            let dryRun = try ExpansionRollback(connection: connection, store: S.store).rollBack(dryRun: true)
            #expect(dryRun.losses.map { "\($0.loss.code.rawValue) \($0.rows)" } == ["rollbackValueDoesNotFit 1"])
            #expect {
                try ExpansionRollback(connection: connection, store: S.store).rollBack(allowDataLoss: true)
            } throws: { error in
                error is RollbackRefused && String(describing: error).contains("[rollbackValueDoesNotFit]")
            }
            #expect(try S.version(on: connection) == "v2")
            #expect(try S.rows("recipe", ["rating"], where: "_pk = 7", on: connection) == [["7", "40000"]])

            try connection.execute("UPDATE shop.recipe SET rating = 4 WHERE _pk = 7")
            try connection.execute("UPDATE shadow.recipe SET rating = 4 WHERE _pk = 7")
            _ = try ExpansionRollback(connection: connection, store: S.store).rollBack()
            try TwinComparison.expectSameStore(S.store, asOfflineTwin: Self.shadow, on: connection)
        }
    }

    /// v2 adds a sub-entity below Recipe: its rows are the new release's only, counted and
    /// deleted; Recipe's rows, the old release's inserts included, are kept.
    @Test func anEntityAddedToAHierarchyGoesWithItsRowsAndTheRestIsKept() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string}}")),
            ("v2", S.version("Recipe: {attributes: {name: string}}\nSoup: {parent: Recipe, attributes: {bowls: int16}}")),
        ])
        try ShadowedStore.with(model, store: S.store, shadow: Self.shadow) { connection, _ in
            try Self.expand(model, on: connection)
            try Self.run([
                Self.old("INSERT INTO recipe (name) VALUES ('old') RETURNING _pk",
                         twin: "INSERT INTO recipe (_pk, _entity, name) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Recipe', 'old')"),
                Self.new("INSERT INTO recipe (_entity, name, bowls) VALUES ('Soup', 'soup', 2), ('Soup', 'broth', 3)", twin: "SELECT 1"),
                Self.new("UPDATE recipe SET name = 'kept' WHERE _pk = 9", twin: "UPDATE recipe SET name = 'kept' WHERE _pk = 9"),
            ], on: connection)
            let report = try ExpansionRollback(connection: connection, store: S.store).rollBack(allowDataLoss: true)
            #expect(report.losses.map { "\($0.loss.code.rawValue) \($0.rows)" }.contains("rollbackDropsRows 2"), "\(report.losses)")
            #expect(try S.version(on: connection) == "v1")
            try TwinComparison.expectSameStore(S.store, asOfflineTwin: Self.shadow, on: connection)
        }
    }

    /// v2 adds an entity and an attribute; the new release writes both. Named first (a dry
    /// run), refused without consent with nothing changed, then dropped with it, the rest kept.
    @Test func whatTheOldVersionCannotHoldIsNamedAndNeedsConsent() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string}}")),
            ("v2", S.version("""
                Recipe: {attributes: {name: string, servings: {type: int32, optional: false, default: 2}}}
                Tag: {attributes: {label: string}}
                """)),
        ])
        try ShadowedStore.with(model, store: S.store, shadow: Self.shadow) { connection, _ in
            try Self.expand(model, on: connection)
            try Self.run([
                Self.old("INSERT INTO recipe (_entity, name) VALUES ('Recipe', 'old') RETURNING _pk",
                         twin: "INSERT INTO recipe (_pk, _entity, name) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Recipe', 'old')"),
                Self.new("UPDATE recipe SET servings = 6, name = 'six' WHERE _pk IN (3, 4)", twin: "UPDATE recipe SET name = 'six' WHERE _pk IN (3, 4)"),
                Self.new("UPDATE recipe SET servings = 2 WHERE _pk = 5", twin: "SELECT 1"),
            ], on: connection)
            try connection.execute("INSERT INTO shop.tag (_entity, label) VALUES ('Tag', 'a'), ('Tag', 'b'), ('Tag', 'c')")

            let dryRun = try ExpansionRollback(connection: connection, store: S.store).rollBack(dryRun: true)
            #expect(dryRun.isDryRun)
            #expect(dryRun.losses.map { "\($0.loss.code.rawValue) \($0.rows)" } == ["rollbackDropsRows 3", "rollbackDropsValues 2"])
            #expect(dryRun.losses.map(\.loss.message) == [
                "rows of Tag (an entity 'v1' does not have) are deleted",
                "Recipe.servings (not in 'v1'): its values other than its default in recipe.servings are dropped",
            ])
            #expect(dryRun.statements.first == #"DROP SCHEMA IF EXISTS "shop@v1" CASCADE"#)
            #expect(try ExpansionRecord.read(store: S.store, on: connection) != nil)

            #expect {
                try ExpansionRollback(connection: connection, store: S.store).rollBack()
            } throws: { error in
                let text = String(describing: error)
                return error is DataLossNotAllowed && text.contains("[rollbackDropsValues] Recipe.servings") && text.contains(": 2 rows")
                    && text.contains("[rollbackDropsRows] rows of Tag") && text.contains("nothing was changed")
            }
            #expect(try S.version(on: connection) == "v2")
            #expect(try ExpansionRecord.read(store: S.store, on: connection) != nil)
            #expect(try connection.execute("SELECT 1 FROM pg_namespace WHERE nspname = \(Self.views)").rows.count == 1)
            #expect(try S.rows("recipe", ["servings"], where: "_pk IN (3, 4)", on: connection) == [["3", "6"], ["4", "6"]])
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.tag").int(0, "n") == 3)

            let report = try ExpansionRollback(connection: connection, store: S.store).rollBack(allowDataLoss: true)
            #expect(report.losses.map(\.rows) == [3, 2])
            #expect(try S.version(on: connection) == "v1")
            #expect(try connection.execute("SELECT 1 FROM pg_tables WHERE schemaname = 'shop' AND tablename = 'tag'").rows.isEmpty)
            try TwinComparison.expectSameStore(S.store, asOfflineTwin: Self.shadow, on: connection)
        }
    }

    @Test func aStepTheInferenceCannotTakeBackIsRefusedAndNothingChanges() throws {
        let model = try S.model([
            ("v1", S.version("""
                Recipe: {attributes: {name: string}, relationships: {chef: {destination: Chef, inverse: recipes}}}
                Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, toMany: true, inverse: chef}}}
                """)),
            ("v2", S.version("""
                Recipe: {attributes: {name: string}, relationships: {chef: {destination: Chef, toMany: true, inverse: recipes}}}
                Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, toMany: true, inverse: chef}}}
                """)),
        ])
        try S.withStore(model, rows: 20) { connection in
            try Self.expand(model, on: connection)
            #expect {
                try ExpansionRollback(connection: connection, store: S.store).rollBack(allowDataLoss: true)
            } throws: { error in
                let text = String(describing: error)
                return error is RollbackRefused && text.contains("[rollbackNotInferable]") && text.contains("entity Recipe, property chef") && text.contains("nothing was changed")
            }
            #expect(try S.version(on: connection) == "v2")
            #expect(try ExpansionRecord.read(store: S.store, on: connection) != nil)
        }
    }

    @Test func nothingInFlightIsRefusedAndSessionsOnTheStoreAreNamed() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string}}")),
            ("v2", S.version("Recipe: {attributes: {title: {type: string, renamingIdentifier: name}}}")),
        ])
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try SampleDataTests.createAndFill(model, version: "v1", store: S.store, rows: 20, on: connection)
            #expect(throws: NothingToRollBack.self) { try ExpansionRollback(connection: connection, store: S.store).rollBack() }
            try Self.expand(model, on: connection)

            let newRelease = try PostgresConnection(url: url)
            defer { newRelease.close() }
            try newRelease.execute("SET application_name = 'shop-v2'")
            try newRelease.execute("BEGIN")
            _ = try newRelease.execute("SELECT count(*) FROM shop.recipe")
            let pid = try #require(newRelease.execute("SELECT pg_backend_pid() AS pid").int(0, "pid"))
            #expect {
                try ExpansionRollback(connection: connection, store: S.store).rollBack()
            } throws: { error in
                let text = String(describing: error)
                return error is StoreInUseForRollback && text.contains("pid \(pid) (application_name 'shop-v2'") && text.contains("nothing was changed")
            }
            #expect(try S.version(on: connection) == "v2")
            let report = try ExpansionRollback(connection: connection, store: S.store).rollBack(force: true, options: ApplyOptions(lockTimeoutMilliseconds: 200))
            #expect(report.endedSessions.map(\.pid) == [Int(pid)])
            #expect(try S.version(on: connection) == "v1")
            #expect(try S.rows("recipe", ["name"], where: "_pk = 1", on: connection).count == 1)
        }
    }
}
