import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// `apply --expand`, then `complete`, with an old release writing through the previous
/// version's views and a new release writing the tables: each reads what the other wrote in
/// its own shape, and the store completed equals the offline migration of the same writes.
@Suite(integration) struct ExpandApplyTests {
    typealias S = MigratedStore
    static let shadow = "shadow"
    static let views = "shop@v1"

    /// A column renamed, an attribute added with a default, an optional attribute removed
    /// (its drop deferred to `complete`).
    static func model() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, rating: int16, note: string}}")),
            ("v2", S.version("Recipe: {attributes: {title: {type: string, renamingIdentifier: name}, rating: int16, servings: {type: int32, optional: false, default: 2}}}")),
        ])
    }

    static func expand(_ model: VersionedModel, on connection: PostgresConnection) throws -> ApplyReport {
        var options = ApplyOptions(allowDataLoss: true, batchSize: 50, online: true)
        options.expand = true
        return try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: options)
    }

    /// The old release: v1's names, unqualified, with the views' schema first on its path (the
    /// store's tables until the views exist); each write made alike, in v1's shape, to the shadow.
    static func oldRelease(_ writer: TwinWriter, _ connection: PostgresConnection) throws {
        try oldRelease(writer, connection, note: "kept")
    }

    /// The same, inserting rows with `note`, or without one (nil).
    static func oldRelease(_ writer: TwinWriter, _ connection: PostgresConnection, note: String?) throws {
        try connection.execute("SET LOCAL search_path = \(ident: views), \(ident: S.store)")
        try releasesTakeTurns(connection)
        let key = writer.random(1...400), rating = writer.random(1...5)
        switch writer.random(0...3) {
        case 0:
            let (column, value): (SQL, SQL) = note.map { (", note", ", \(literal: $0)") } ?? ("", "")
            let pk = try connection.execute("INSERT INTO recipe (_entity, name, rating\(column)) VALUES ('Recipe', 'old', \(literal: rating)\(value)) RETURNING _pk").rows[0][0]!
            try connection.execute("INSERT INTO \(ident: shadow, "recipe") (_pk, _entity, name, rating\(column)) OVERRIDING SYSTEM VALUE VALUES (\(unsafeRaw: pk), 'Recipe', 'old', \(literal: rating)\(value))")
        case 1, 2:
            try connection.execute("UPDATE recipe SET name = name || '+', rating = \(literal: rating) WHERE _pk = \(literal: key)")
            try connection.execute("UPDATE \(ident: shadow, "recipe") SET name = name || '+', rating = \(literal: rating) WHERE _pk = \(literal: key)")
        default:
            try connection.execute("DELETE FROM recipe WHERE _pk = \(literal: key)")
            try connection.execute("DELETE FROM \(ident: shadow, "recipe") WHERE _pk = \(literal: key)")
        }
    }

    /// The two releases' transactions take turns (the migration does not wait for them): under
    /// READ COMMITTED each statement sees the rows committed before it, so a transaction of one
    /// release overlapping one of the other could update a row in the shadow that its statement
    /// on the live store did not yet see, and the twin would differ for no fault of the store.
    static func releasesTakeTurns(_ connection: PostgresConnection) throws {
        try connection.execute("SELECT pg_advisory_xact_lock(2025, 1)")
    }

    /// The new release: v2's names on the store's tables; the shadow gets the same in v1's.
    static func newRelease(_ writer: TwinWriter, _ connection: PostgresConnection) throws {
        try releasesTakeTurns(connection)
        let key = writer.random(1...400), rating = writer.random(1...5)
        switch writer.random(0...3) {
        case 0:
            let pk = try connection.execute("INSERT INTO \(ident: S.store, "recipe") (_entity, title, rating) VALUES ('Recipe', 'new', \(literal: rating)) RETURNING _pk").rows[0][0]!
            try connection.execute("INSERT INTO \(ident: shadow, "recipe") (_pk, _entity, name, rating) OVERRIDING SYSTEM VALUE VALUES (\(unsafeRaw: pk), 'Recipe', 'new', \(literal: rating))")
        case 1, 2:
            try connection.execute("UPDATE \(ident: S.store, "recipe") SET title = title || '*', rating = \(literal: rating) WHERE _pk = \(literal: key)")
            try connection.execute("UPDATE \(ident: shadow, "recipe") SET name = name || '*', rating = \(literal: rating) WHERE _pk = \(literal: key)")
        default:
            try connection.execute("DELETE FROM \(ident: S.store, "recipe") WHERE _pk = \(literal: key)")
            try connection.execute("DELETE FROM \(ident: shadow, "recipe") WHERE _pk = \(literal: key)")
        }
    }

    @Test func anOldAndANewReleaseWriteThroughExpandAndCompleteAndTheStoreEqualsItsOfflineTwin() throws {
        let model = try Self.model()
        try ShadowedStore.with(model, store: S.store, shadow: Self.shadow) { connection, url in
            let old = TwinWriter(url: url, live: S.store, twin: Self.shadow, rules: .rolling, write: Self.oldRelease)
            var running = [old]
            // A writer is stopped once: by the test, or here when it ends early.
            defer { running.forEach { $0.stop() } }
            old.start()
            old.waitForCommits(20)

            let report = try Self.expand(model, on: connection)
            #expect(report.appliedSteps.count == 1)
            #expect(try S.version(on: connection) == "v2")
            let record = try #require(try ExpansionRecord.read(store: S.store, on: connection))
            #expect(record.viewsSchema == Self.views && record.oldVersion == "v1" && record.newVersion == "v2")
            #expect(record.deferred.map(\.sql) == [#"ALTER TABLE "shop"."recipe" DROP COLUMN "note""#])
            let afterExpand = old.commits
            old.waitForCommits(afterExpand + 20)
            #expect(old.commits >= afterExpand + 20, "the old release stopped writing after apply --expand")

            let new = TwinWriter(url: url, live: S.store, twin: Self.shadow, rules: .concurrent, write: Self.newRelease)
            running.append(new)
            new.start()
            new.waitForCommits(20)

            // Each release reads what the other wrote, in its own shape.
            let fromNew = try connection.execute("INSERT INTO shop.recipe (_entity, title, rating) VALUES ('Recipe', 'from new', 3) RETURNING _pk").rows[0][0]!
            try connection.execute("INSERT INTO shadow.recipe (_pk, _entity, name, rating) OVERRIDING SYSTEM VALUE VALUES (\(unsafeRaw: fromNew), 'Recipe', 'from new', 3)")
            let fromOld = try connection.transaction {
                try connection.execute("SET LOCAL search_path = \(ident: Self.views)")
                let read = try connection.execute("SELECT name, rating, note FROM recipe WHERE _pk = \(unsafeRaw: fromNew)").rows
                #expect(read == [["from new", "3", nil]])
                return try connection.execute("INSERT INTO recipe (_entity, name, rating) VALUES ('Recipe', 'from old', 4) RETURNING _pk").rows[0][0]!
            }
            try connection.execute("INSERT INTO shadow.recipe (_pk, _entity, name, rating) OVERRIDING SYSTEM VALUE VALUES (\(unsafeRaw: fromOld), 'Recipe', 'from old', 4)")
            #expect(try S.rows("recipe", ["title", "rating", "servings"], where: "_pk = \(fromOld)", on: connection) == [[fromOld, "from old", "4", "2"]])

            old.stop()
            running.removeAll { $0 === old }
            #expect(old.failure == nil, "\(String(describing: old.failure))")
            // The renames ran with the views' creation: the old release never met a renamed name.
            #expect(old.refused["42703"] == nil && old.refused["42P01"] == nil, "\(old.refused)")
            let completion = try ExpansionCompletion(connection: connection, store: S.store).complete(force: false)
            #expect(completion.statements.count == 2 && completion.endedSessions.isEmpty)
            new.waitForCommits(new.commits + 5)
            new.stop()
            running.removeAll { $0 === new }
            #expect(new.failure == nil, "\(String(describing: new.failure))")
            #expect(old.commits >= 40 && new.commits >= 20)

            #expect(try ExpansionRecord.read(store: S.store, on: connection) == nil)
            #expect(try connection.execute("SELECT 1 FROM pg_namespace WHERE nspname = \(Self.views)").rows.isEmpty)
            #expect(try S.history(on: connection).suffix(2) == ["expand v1 -> v2 succeeded", "complete v1 -> v2 succeeded"])
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
        }
    }

    /// The drop `complete` runs later is consented to when `apply --expand` plans it, as
    /// `apply` asks: without `--allow-data-loss` nothing is changed and the rows keep the column.
    @Test func theDeferredDropNeedsConsentAtExpand() throws {
        let model = try Self.model()
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try SampleDataTests.createAndFill(model, version: "v1", store: S.store, rows: 20, on: connection)
            let before = try connection.execute("SELECT count(note) AS n FROM shop.recipe").int(0, "n")
            var options = ApplyOptions(batchSize: 50, online: true)
            options.expand = true
            #expect(throws: DataLossNotAllowed.self) { try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: options) }
            #expect(try S.version(on: connection) == "v1")
            #expect(try ExpansionRecord.read(store: S.store, on: connection) == nil)
            #expect(try connection.execute("SELECT count(note) AS n FROM shop.recipe").int(0, "n") == before && (before ?? 0) > 0)
        }
    }

    @Test func completeRefusesWhileASessionUsesTheOldViewsAndForceEndsIt() throws {
        let model = try Self.model()
        try TestDatabase.withFreshDatabase { url in
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try SampleDataTests.createAndFill(model, version: "v1", store: S.store, rows: 20, on: connection)
            _ = try Self.expand(model, on: connection)
            let oldRelease = try PostgresConnection(url: url)
            defer { oldRelease.close() }
            try oldRelease.execute("SET application_name = 'shop-v1'")
            try oldRelease.execute("BEGIN")
            _ = try oldRelease.execute("SELECT count(*) FROM \(ident: Self.views, "recipe")")
            let pid = try #require(oldRelease.execute("SELECT pg_backend_pid() AS pid").int(0, "pid"))

            #expect {
                try ExpansionCompletion(connection: connection, store: S.store).complete(force: false)
            } throws: { error in
                let text = String(describing: error)
                return error is OldVersionInUse && text.contains("pid \(pid) (application_name 'shop-v1'") && text.contains("nothing was changed")
            }
            #expect(try ExpansionRecord.read(store: S.store, on: connection) != nil)
            #expect(try connection.execute("SELECT 1 FROM pg_namespace WHERE nspname = \(Self.views)").rows.count == 1)
            #expect(try S.rows("recipe", ["note"], where: "_pk = 1", on: connection).count == 1)

            let report = try ExpansionCompletion(connection: connection, store: S.store).complete(force: true, options: ApplyOptions(lockTimeoutMilliseconds: 200))
            #expect(report.endedSessions.map(\.pid) == [Int(pid)])
            #expect(try connection.execute("SELECT 1 FROM pg_namespace WHERE nspname = \(Self.views)").rows.isEmpty)
            #expect(try ExpansionRecord.read(store: S.store, on: connection) == nil)
            #expect(throws: (any Error).self) { try S.rows("recipe", ["note"], on: connection) }
        }
    }

    @Test func aChangeTheViewsCannotServeIsRefusedWithItsCodeAndNothingChanges() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, code: {type: string, optional: false}}}")),
            ("v2", S.version("Recipe: {attributes: {name: string}}")),
        ])
        try S.withStore(model, rows: 20) { connection in
            let plan = try StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .expand)
            #expect(plan.blockerDetails.map(\.code) == [.expandRemovedRequired])
            #expect(plan.blockers == ["Recipe.code removed: it is required without a default, and the old version would read NULL in it"])
            #expect(throws: NotExecutable.self) { try Self.expand(model, on: connection) }
            #expect(try S.version(on: connection) == "v1")
            #expect(try S.rows("recipe", ["code"], where: "_pk = 1", on: connection).count == 1)
            #expect(try connection.execute("SELECT 1 FROM pg_namespace WHERE nspname = \(Self.views)").rows.isEmpty)
        }
    }
}
