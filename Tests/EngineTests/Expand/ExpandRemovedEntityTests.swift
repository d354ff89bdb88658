import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// `apply --expand` of a step removing entities (issue 25): their tables stay until `complete`,
/// and the old version reads and writes them through its views, links to the entities the new
/// version keeps included; the new version works on its tables; `complete` drops them (the
/// consent was given at expand, as for a plain removal); `rollback` keeps every row.
@Suite(integration) struct ExpandRemovedEntityTests {
    typealias S = MigratedStore
    static let views = "shop@v1"

    /// v2 removes Note (a one-to-many from Recipe, stored in note.recipe_pk, and a to-one of
    /// Recipe, stored in recipe.cover_pk) and Tag (a many-to-many, in a join table).
    static func model() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("""
                Recipe: {attributes: {name: string}, relationships: {notes: {destination: Note, inverse: recipe, toMany: true}, cover: {destination: Note, inverse: covers}, tags: {destination: Tag, inverse: recipes, toMany: true}}}
                Note: {attributes: {text: string}, relationships: {recipe: {destination: Recipe, inverse: notes}, covers: {destination: Recipe, inverse: cover, toMany: true}}}
                Tag: {attributes: {label: string}, relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
                """)),
            ("v2", S.version("Recipe: {attributes: {name: string}}")),
        ])
    }

    static func expand(_ model: VersionedModel, allowDataLoss: Bool = true, on connection: PostgresConnection) throws {
        var options = ApplyOptions(allowDataLoss: allowDataLoss, online: true)
        options.expand = true
        _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: options)
    }

    static func count(_ sql: String, on connection: PostgresConnection) throws -> Int {
        try #require(Int(connection.execute(SQL(unsafeRaw: sql)).rows[0][0] ?? ""))
    }

    static func joinTable(on connection: PostgresConnection) throws -> String {
        try #require(connection.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'shop' AND table_name LIKE '%\\_\\_%' ").rows.first?.first ?? nil)
    }

    @Test func theOldVersionReadsAndWritesTheRemovedEntitiesUntilCompleteDropsThem() throws {
        let model = try Self.model()
        try S.withStore(model, rows: 20) { connection in
            let join = try Self.joinTable(on: connection)
            let notes = try Self.count("SELECT count(*) FROM shop.note", on: connection)
            let links = try Self.count("SELECT count(*) FROM shop.\(join)", on: connection)
            let linked = try Self.count("SELECT count(*) FROM shop.note WHERE recipe_pk IS NOT NULL", on: connection)
            #expect(notes == 20 && links > 0 && linked > 0)

            // The removal is data loss at expand, as without --expand: no consent, no change.
            #expect(throws: DataLossNotAllowed.self) { try Self.expand(model, allowDataLoss: false, on: connection) }
            #expect(try S.version(on: connection) == "v1")
            let plan = try StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .expand)
            #expect(plan.blockerDetails.isEmpty, "\(plan.blockers)")
            try Self.expand(model, on: connection)
            #expect(try S.version(on: connection) == "v2")

            // Kept where they were, nothing copied; the old version reads them all.
            #expect(try Self.count("SELECT count(*) FROM shop.note", on: connection) == notes)
            #expect(try ServedVersion.old("note", ["_pk", "text", "recipe_pk"], on: connection)
                == S.rows("note", ["text", "recipe_pk"], on: connection))
            #expect(try Self.count("SELECT count(*) FROM \"shop@v1\".\(join)", on: connection) == links)
            #expect(try Self.count("SELECT count(*) FROM \"shop@v1\".recipe WHERE cover_pk IS NOT NULL", on: connection)
                == Self.count("SELECT count(*) FROM shop.recipe WHERE cover_pk IS NOT NULL", on: connection))

            // The new release adds a recipe; the old one writes notes, tags and links to it.
            let recipe = try #require(connection.execute("INSERT INTO shop.recipe (_entity, name) VALUES ('Recipe', 'new') RETURNING _pk").rows[0][0])
            #expect(try ServedVersion.old("recipe", ["_pk", "name"], where: "_pk = \(recipe)", on: connection) == [[recipe, "new"]])
            let inserted = try ServedVersion.write("INSERT INTO note (_entity, text, recipe_pk) VALUES ('Note', 'old', \(recipe)) RETURNING _pk", on: connection)
            let note = try #require(inserted)
            try ServedVersion.write("UPDATE recipe SET cover_pk = \(note) WHERE _pk = \(recipe)", on: connection)
            let insertedTag = try ServedVersion.write("INSERT INTO tag (label) VALUES ('old') RETURNING _pk", on: connection)
            let tag = try #require(insertedTag)
            // The kept table's own defaults serve the old release's inserts (`_entity`, `_pk`).
            #expect(try S.rows("tag", ["_entity", "label"], where: "_pk = \(tag)", on: connection) == [[tag, "Tag", "old"]])
            let (owner, target) = join.hasPrefix("recipe") ? (recipe, tag) : (tag, recipe)
            let joinColumns = try connection.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = 'shop' AND table_name = \(join) ORDER BY ordinal_position").rows.map { $0[0]! }
            try ServedVersion.write("INSERT INTO \(join) (\(joinColumns[0]), \(joinColumns[1])) VALUES (\(owner), \(target))", on: connection)
            try ServedVersion.write("UPDATE note SET text = 'changed' WHERE _pk = 1", on: connection)
            try ServedVersion.write("DELETE FROM note WHERE _pk = 2", on: connection)
            #expect(try S.rows("note", ["text", "recipe_pk"], where: "_pk IN (1, 2, \(note))", on: connection).map { $0[1] } == ["changed", "old"])
            #expect(try S.rows("recipe", ["cover_pk"], where: "_pk = \(recipe)", on: connection) == [[recipe, note]])
            #expect(try Self.count("SELECT count(*) FROM shop.\(join)", on: connection) == links + 1)
            #expect(try Self.count("SELECT count(*) FROM \"shop@v1\".note WHERE recipe_pk = \(recipe)", on: connection) == 1)

            // The new release deletes a recipe with notes: v1's Nullify clears their link, as
            // the old version expects; its tag links go with it.
            let doomed = try #require(connection.execute("SELECT recipe_pk FROM shop.note WHERE recipe_pk IS NOT NULL AND recipe_pk <> \(recipe) ORDER BY _pk LIMIT 1").rows[0][0])
            try connection.execute(SQL(unsafeRaw: "DELETE FROM shop.recipe WHERE _pk = \(doomed)"))
            #expect(try Self.count("SELECT count(*) FROM \"shop@v1\".note WHERE recipe_pk = \(doomed)", on: connection) == 0)
            #expect(try Self.count("SELECT count(*) FROM \"shop@v1\".note", on: connection) == notes)

            // Drift: the store follows v2 (the kept tables are not blocking), the views v1.
            let read = try ExpansionRecord.read(store: S.store, on: connection)
            let record = try #require(read)
            #expect(try ViewsDrift.drift(of: record, model: model, on: connection).isEmpty)
            let drift = try DriftCheck.drift(of: S.store, from: model.versions[1], on: connection)
            #expect(drift.blocking.isEmpty)
            #expect(ViewsDrift.withoutKeptColumns(drift.items, model: model, from: "v1", to: "v2", store: S.store) == [], "\(drift.items)")

            _ = try ExpansionCompletion(connection: connection, store: S.store).complete(force: false)
            #expect(try connection.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'shop' ORDER BY 1").rows.map { $0[0]! } == ["recipe"])
            #expect(try S.history(on: connection).suffix(2) == ["expand v1 -> v2 succeeded", "complete v1 -> v2 succeeded"])
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// The old release: notes (a removed entity) by v1's names, before, during and after
    /// `apply --expand`; the twin gets each write alike, in v1's shape.
    static func oldRelease(_ writer: TwinWriter, _ connection: PostgresConnection) throws {
        try connection.execute("SET LOCAL search_path = \(ident: views), \(ident: S.store)")
        try ExpandApplyTests.releasesTakeTurns(connection)
        let key = writer.random(1...400), recipe = writer.random(1...300)
        let link: SQL = "(SELECT _pk FROM recipe WHERE _pk = \(literal: recipe))"
        switch writer.random(0...3) {
        case 0:
            let pk = try connection.execute("INSERT INTO note (_entity, text, recipe_pk) VALUES ('Note', 'old', \(link)) RETURNING _pk").rows[0][0]!
            try connection.execute("INSERT INTO shadow.note (_pk, _entity, text, recipe_pk) OVERRIDING SYSTEM VALUE SELECT \(unsafeRaw: pk), 'Note', 'old', recipe_pk FROM note WHERE _pk = \(unsafeRaw: pk)")
        case 1, 2:
            try connection.execute("UPDATE note SET text = text || '+', recipe_pk = \(link) WHERE _pk = \(literal: key)")
            try connection.execute("UPDATE shadow.note AS s SET text = n.text, recipe_pk = n.recipe_pk FROM note AS n WHERE n._pk = s._pk AND s._pk = \(literal: key)")
        default:
            try connection.execute("DELETE FROM note WHERE _pk = \(literal: key)")
            try connection.execute("DELETE FROM shadow.note WHERE _pk = \(literal: key)")
        }
    }

    /// The new release: recipes by v2's names on the store's tables; the twin gets the same.
    static func newRelease(_ writer: TwinWriter, _ connection: PostgresConnection) throws {
        try ExpandApplyTests.releasesTakeTurns(connection)
        let key = writer.random(1...300)
        switch writer.random(0...3) {
        case 0:
            let pk = try connection.execute("INSERT INTO shop.recipe (_entity, name) VALUES ('Recipe', 'new') RETURNING _pk").rows[0][0]!
            try connection.execute("INSERT INTO shadow.recipe (_pk, _entity, name) OVERRIDING SYSTEM VALUE VALUES (\(unsafeRaw: pk), 'Recipe', 'new')")
        case 1, 2:
            try connection.execute("UPDATE shop.recipe SET name = name || '*' WHERE _pk = \(literal: key)")
            try connection.execute("UPDATE shadow.recipe SET name = name || '*' WHERE _pk = \(literal: key)")
        default:
            try connection.execute("DELETE FROM shop.recipe WHERE _pk = \(literal: key)")
            try connection.execute("DELETE FROM shadow.recipe WHERE _pk = \(literal: key)")
        }
    }

    /// Two releases write at once through `apply --expand` and until `complete`: the old one
    /// the removed entity's rows and links, the new one the kept entity's (deleting recipes the
    /// notes link to); each reads the other's writes; the completed store equals the offline
    /// migration of the twin that got the same writes.
    @Test func anOldAndANewReleaseWriteThroughExpandAndCompleteAndTheStoreEqualsItsOfflineTwin() throws {
        let model = try Self.model()
        try ShadowedStore.with(model, store: S.store, shadow: ExpandApplyTests.shadow) { connection, url in
            let old = TwinWriter(url: url, live: S.store, twin: ExpandApplyTests.shadow, rules: .rolling, write: Self.oldRelease)
            var running = [old]
            defer { running.forEach { $0.stop() } }
            old.start()
            old.waitForCommits(20)
            try Self.expand(model, on: connection)
            let afterExpand = old.commits
            old.waitForCommits(afterExpand + 20)
            #expect(old.commits >= afterExpand + 20, "the old release stopped writing after apply --expand")

            let new = TwinWriter(url: url, live: S.store, twin: ExpandApplyTests.shadow, rules: .concurrent, write: Self.newRelease)
            running.append(new)
            new.start()
            new.waitForCommits(20)
            old.waitForCommits(old.commits + 20)
            // The old release reads the recipes the new one wrote, and its notes stay linked to them.
            let newest = try #require(connection.execute("SELECT max(_pk) FROM shop.recipe").rows[0][0])
            #expect(try ServedVersion.old("recipe", ["_pk"], where: "_pk = \(newest)", on: connection) == [[newest]])

            old.stop()
            running.removeAll { $0 === old }
            #expect(old.failure == nil, "\(String(describing: old.failure))")
            // Until complete, the removed entity's rows are the twin's, row for row (links the
            // new release's deletes cleared by v1's Nullify included).
            new.pause()
            let twin = try connection.execute("SELECT _pk, text, recipe_pk FROM shadow.note ORDER BY 1, 2").rows
            #expect(try ServedVersion.old("note", ["_pk", "text", "recipe_pk"], on: connection) == twin)
            #expect(twin.count > 250)
            new.resume()
            _ = try ExpansionCompletion(connection: connection, store: S.store).complete(force: false)
            new.waitForCommits(new.commits + 5)
            new.stop()
            running.removeAll { $0 === new }
            #expect(new.failure == nil, "\(String(describing: new.failure))")
            #expect(old.commits >= 60 && new.commits >= 20)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
        }
    }

    /// Both releases write, then `rollback`: the store equals a twin that stayed at v1 and got
    /// the same writes; the removed entities' rows never moved, so none is lost.
    @Test func rollbackKeepsEveryRowEitherReleaseWrote() throws {
        let model = try Self.model()
        typealias R = ExpandRollbackTests
        try R.expectRollbackKeepsEveryWrite(model, writes: [
            R.old("INSERT INTO note (_entity, text, recipe_pk) VALUES ('Note', 'old', 3) RETURNING _pk",
                  twin: "INSERT INTO note (_pk, _entity, text, recipe_pk) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Note', 'old', 3)"),
            R.old("UPDATE note SET text = text || '+' WHERE _pk <= 10"),
            R.old("DELETE FROM note WHERE _pk BETWEEN 11 AND 13"),
            R.old("UPDATE recipe SET cover_pk = 5 WHERE _pk BETWEEN 1 AND 4"),
            R.old("INSERT INTO tag (_entity, label) VALUES ('Tag', 'old') RETURNING _pk",
                  twin: "INSERT INTO tag (_pk, _entity, label) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Tag', 'old')"),
            R.new("INSERT INTO recipe (_entity, name) VALUES ('Recipe', 'new') RETURNING _pk",
                  twin: "INSERT INTO recipe (_pk, _entity, name) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Recipe', 'new')"),
            R.new("UPDATE recipe SET name = name || '*' WHERE _pk BETWEEN 5 AND 20", twin: "UPDATE recipe SET name = name || '*' WHERE _pk BETWEEN 5 AND 20"),
            R.new("DELETE FROM recipe WHERE _pk = 7", twin: "DELETE FROM recipe WHERE _pk = 7"),
        ])
    }
}
