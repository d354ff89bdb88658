import Foundation
import Testing
import Mapping
import PostgresClient
import ObjectModel
import Planning
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 25, point 3: a heavyweight step's new version written through its views when a
/// reverse mapping model (Kitchen 2 -> Kitchen 1) is given. The old release writes the store's
/// tables through the run and the wait; the new release writes `"shop@Kitchen_2"`: its writes
/// land in the store's tables in Kitchen 1's shape (the old release reads them at once), read
/// back at once through the views, and `complete` gives the offline migration of both
/// releases' writes, row for row.
@Suite(integration) struct HeavyweightExpandWritesTests {
    typealias S = MigratedStore
    typealias Kitchen = HeavyweightMigrationTests
    typealias Online = OnlineHeavyweightTests
    typealias Expand = HeavyweightExpandTests
    static let views = Expand.views

    static func reverseMapping() -> MappingModel {
        MappingModel(source: "Kitchen 2", destination: "Kitchen 1", entityMappings: [
            EntityMappingDefinition(name: "ChefToChef", type: .copy, sourceEntity: "Chef", destinationEntity: "Chef"),
            EntityMappingDefinition(
                name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe",
                attributeMappings: [
                    PropertyMappingDefinition(name: "amount", valueExpression: "$source.totalCost"),
                    PropertyMappingDefinition(name: "temperature", valueExpression: "$source.temperatureC * 1.8 + 32.0"),
                ],
                relationshipMappings: [
                    PropertyMappingDefinition(name: "chef", valueExpression: #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToChef", $source.author)"#),
                ]
            ),
        ], file: "kitchen-2-to-1.yaml")
    }

    static func migrator(_ model: VersionedModel, on connection: PostgresConnection) -> StoreMigrator {
        StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [
            ExplicitMapping(Kitchen.kitchenMapping()), ExplicitMapping(reverseMapping()),
        ])
    }

    /// `apply --expand` with the old release's first half of writes going on; returns once the
    /// run waits for `complete`.
    static func expanded(on connection: PostgresConnection, model: VersionedModel, options: ApplyOptions = Expand.options()) throws -> BackgroundApply {
        let writer = try TwinWriter.script(sessionsLike: connection, Expand.firstHalf, every: 0.01)
        writer.start()
        let run = try BackgroundApply(migrator(model, on: connection), options: options, from: connection)
        #expect(run.waitForEvent { $0.kind == .paused && $0.reason?.hasPrefix("switch-over postponed") == true }, "the run never waited for complete: \(run.events.suffix(3))")
        #expect(writer.waitUntilDone() && writer.failure == nil, "the old release's writes failed: \(String(describing: writer.failure))")
        return run
    }

    /// A session of the new release: `search_path` the new version's views, then the store.
    static func newRelease(like connection: PostgresConnection) throws -> PostgresConnection {
        let session = try connection.reconnect()
        try session.execute("SET search_path = \(ident: views), \(ident: S.store)")
        return session
    }

    @Test func planningWritesEveryTableOfTheKitchenThroughTheReverseMapping() throws {
        let model = try Kitchen.kitchen()
        let views = try #require(try NewVersionViewsFixture.planned(model, forward: Kitchen.kitchenMapping(), reverse: Self.reverseMapping()))
        #expect(views.writes?.writtenTables == ["chef", "recipe"] && views.writes?.readOnly.isEmpty == true, "\(String(describing: views.writes?.readOnly))")
        #expect(!views.isReadOnly)
        // A reverse mapping with a filter writes nothing of that table, and says why.
        var filtered = Self.reverseMapping()
        filtered.entityMappings[1].filter = "$source.totalCost > 0"
        let partly = try #require(try NewVersionViewsFixture.planned(model, forward: Kitchen.kitchenMapping(), reverse: filtered))
        #expect(partly.writes?.writtenTables == ["chef"])
        #expect(partly.writes?.readOnly["recipe"]?.contains("reverse entity mapping RecipeToRecipe has a filter") == true, "\(String(describing: partly.writes?.readOnly))")
        // Without a reverse mapping model, the views stay read-only.
        let none = try #require(try NewVersionViewsFixture.planned(model, forward: Kitchen.kitchenMapping(), reverse: nil))
        #expect(none.writes == nil && none.isReadOnly)
    }

    /// Bad input: a reverse mapping model naming an attribute the old version lacks is refused
    /// by `plan --expand` and `apply --expand`, naming the file and the attribute; nothing changes.
    @Test func aReverseMappingThatDoesNotResolveIsRefusedNamingTheFileAndTheAttribute() throws {
        let model = try Kitchen.kitchen()
        var broken = Self.reverseMapping()
        broken.entityMappings[1].attributeMappings.append(PropertyMappingDefinition(name: "spiciness", valueExpression: "$source.totalCost"))
        let plan = try NewVersionViewsFixture.plan(model, forward: Kitchen.kitchenMapping(), reverse: broken)
        let refusal = try #require(plan.blockerDetails.first { $0.code == .mappingModelRefused }, "\(plan.blockers)")
        #expect(refusal.message.contains("kitchen-2-to-1.yaml") && refusal.message.contains("spiciness"), "\(refusal.message)")
        try S.withStore(model) { connection in
            let before = try Online.sourceSnapshot(S.store, on: connection)
            let migrator = StoreMigrator(connection: connection, model: model, store: S.store, explicitMappings: [ExplicitMapping(Kitchen.kitchenMapping()), ExplicitMapping(broken)])
            let failure = try #require(throws: NotExecutable.self) { try migrator.apply(options: Expand.options()) }
            #expect(failure.description.contains("spiciness"), "\(failure)")
            #expect(try S.version(on: connection) == "Kitchen 1" && Online.sourceSnapshot(S.store, on: connection) == before)
            #expect(try !Expand.schemaExists("shop~staging", on: connection))
        }
    }

    @Test func theNewReleaseWritesThroughItsViewsTheOldReleaseReadsItAndCompleteGivesTheOfflineResult() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            let run = try Self.expanded(on: connection, model: model)
            defer { run.end(on: connection) }
            let newRelease = try Self.newRelease(like: connection)
            defer { newRelease.close() }

            // An insert without a key takes one from the store's sequence, read back at once.
            let chef = try newRelease.execute("INSERT INTO chef (name) VALUES ('new release chef') RETURNING _pk, _entity")
            let chefKey = try #require(chef.int(0, "_pk"))
            #expect(chef.value(0, "_entity") == "Chef")
            let recipe = try newRelease.execute("""
                INSERT INTO recipe (_pk, name, total_cost, temperature_c, author_pk) VALUES (300001, 'new release recipe', 7, 100, \(chefKey))
                RETURNING _pk
                """)
            #expect(recipe.int(0, "_pk") == 300_001)
            #expect(try newRelease.execute("SELECT total_cost, temperature_c, author_pk FROM recipe WHERE _pk = 300001").rows == [["7", "100", String(chefKey)]])
            try newRelease.execute("UPDATE recipe SET total_cost = total_cost + 40, name = name || ' n' WHERE _pk IN (30, 31)")
            try newRelease.execute("DELETE FROM recipe WHERE _pk = 32")
            #expect(try newRelease.execute("SELECT count(*) AS n FROM recipe WHERE _pk = 32").int(0, "n") == 0)

            // The old release reads them at once, in its shape.
            #expect(try connection.execute("SELECT name FROM shop.chef WHERE _pk = \(chefKey)").rows == [["new release chef"]])
            #expect(try connection.execute("SELECT amount, temperature, chef_pk FROM shop.recipe WHERE _pk = 300001").rows == [["7", "212", String(chefKey)]])
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.recipe WHERE _pk = 32").int(0, "n") == 0)

            // The old release's second half, then complete.
            let writer = try TwinWriter.script(sessionsLike: connection, Expand.secondHalf, every: 0.005)
            writer.start()
            #expect(writer.waitUntilDone() && writer.failure == nil, "\(String(describing: writer.failure))")
            // The new release's writes, as the old release would have written them.
            let translated: [SQL] = [
                "INSERT INTO shop.chef (_pk, _entity, name) VALUES (\(chefKey), 'Chef', 'new release chef')",
                "INSERT INTO shop.recipe (_pk, _entity, name, amount, temperature, chef_pk) VALUES (300001, 'Recipe', 'new release recipe', 7, 212, \(chefKey))",
                "UPDATE shop.recipe SET amount = amount + 40, name = name || ' n' WHERE _pk IN (30, 31)",
                "DELETE FROM shop.recipe WHERE _pk = 32",
            ]
            let reference = try Online.offlineMigration(after: Expand.firstHalf + translated + Expand.secondHalf)
            try Expand.expectViewsReach(reference.migrated, on: connection)
            try newRelease.execute("RESET search_path")

            let report = try ExpansionCompletion(connection: connection, store: S.store).complete(force: false)
            #expect(report.switchedOver)
            _ = try #require(run.result(), "the run did not finish after complete").get()
            #expect(try S.version(on: connection) == "Kitchen 2")
            TwinComparison.expectSameRows(try Online.snapshot(S.store, on: connection), reference.migrated)
            try Online.expectNoTriggersLeft(on: connection)
            // The store's key sequence went past every key the views gave out.
            let next = try connection.execute("INSERT INTO shop.chef (name) VALUES ('after complete') RETURNING _pk").int(0, "_pk")
            #expect((next ?? 0) > max(chefKey, 300_001 - 100_000))
        }
    }

    /// The same writers through `rollback`: the new release's writes are rows of the store's
    /// tables, so the store at Kitchen 1 keeps them, and a later offline `apply` gives what the
    /// offline migration of both releases' writes gives.
    @Test func rollbackKeepsWhatTheNewReleaseWroteThroughItsViews() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            let run = try Self.expanded(on: connection, model: model)
            defer { run.end(on: connection) }
            let newRelease = try Self.newRelease(like: connection)
            defer { newRelease.close() }
            try newRelease.execute("INSERT INTO chef (_pk, name) VALUES (300001, 'new release chef')")
            try newRelease.execute("INSERT INTO recipe (_pk, name, total_cost, temperature_c, author_pk) VALUES (300001, 'new release recipe', 7, 100, 300001)")
            try newRelease.execute("UPDATE recipe SET total_cost = 41 WHERE _pk = 30")
            try newRelease.execute("RESET search_path")
            let writer = try TwinWriter.script(sessionsLike: connection, Expand.secondHalf, every: 0.005)
            writer.start()
            #expect(writer.waitUntilDone() && writer.failure == nil, "\(String(describing: writer.failure))")

            _ = try ExpansionRollback(connection: connection, store: S.store).rollBack(force: true)
            _ = run.result()
            let translated: [SQL] = [
                "INSERT INTO shop.chef (_pk, _entity, name) VALUES (300001, 'Chef', 'new release chef')",
                "INSERT INTO shop.recipe (_pk, _entity, name, amount, temperature, chef_pk) VALUES (300001, 'Recipe', 'new release recipe', 7, 212, 300001)",
                "UPDATE shop.recipe SET amount = 41 WHERE _pk = 30",
            ]
            let reference = try Online.offlineMigration(after: Expand.firstHalf + translated + Expand.secondHalf)
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try Online.sourceSnapshot(S.store, on: connection) == reference.source)
            try Online.expectNoTriggersLeft(on: connection)
            _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply()
            TwinComparison.expectSameRows(try Online.snapshot(S.store, on: connection), reference.migrated)
        }
    }

    /// A write through the views that arrives while `complete` holds the store's writes waits at
    /// the switch-over's turn, holding nothing the swap needs, and then lands in the store's
    /// table at the new version, as written.
    @Test func aWriteThroughTheViewsDuringTheSwitchOverWaitsAndLandsInTheNewStore() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            let newRelease = try Self.newRelease(like: connection)
            defer { newRelease.close() }
            let watcher = try connection.reconnect()
            defer { watcher.close() }
            let outcome = Outcome()
            var options = Expand.options()
            options.onWritesHeld = WritesHeld {
                let thread = Thread {
                    do {
                        let result = try newRelease.execute("INSERT INTO recipe (_pk, name, total_cost, temperature_c, author_pk) VALUES (300002, 'during switch-over', 9, 50, 1) RETURNING _pk")
                        outcome.set(result.int(0, "_pk").map { "inserted \($0)" } ?? "no key")
                    } catch {
                        outcome.set("failed: \(error)")
                    }
                }
                thread.start()
                // It waits at the turn the guard holds (an advisory lock), before touching any table.
                let deadline = Date().addingTimeInterval(10)
                while try watcher.execute("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = \(Int64(newRelease.backendPID)) AND wait_event = 'advisory'").int(0, "n") != 1, Date() < deadline {
                    Thread.sleep(forTimeInterval: 0.02)
                }
            }
            let run = try Self.expanded(on: connection, model: model, options: options)
            defer { run.end(on: connection) }
            _ = try ExpansionCompletion(connection: connection, store: S.store).complete(force: false)
            _ = try #require(run.result(), "the run did not finish after complete").get()
            let deadline = Date().addingTimeInterval(10)
            while outcome.value == nil, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            #expect(outcome.value == "inserted 300002")
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try connection.execute("SELECT name, total_cost, temperature_c, author_pk FROM shop.recipe WHERE _pk = 300002").rows == [["during switch-over", "9", "50", "1"]])
            #expect(try !Expand.schemaExists(Self.views, on: connection) && !Expand.schemaExists(Self.views + "~retired", on: connection))
        }
    }

    /// A schema already named as the retired views would be, that orchestrator did not make, is
    /// never dropped: the switch-over fails naming it, and the store stays at Kitchen 1 with it.
    @Test func aForeignSchemaInTheRetiredViewsPlaceIsNeverDropped() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            try connection.execute(#"CREATE SCHEMA "shop@Kitchen_2~retired"; CREATE TABLE "shop@Kitchen_2~retired".notes (body text); INSERT INTO "shop@Kitchen_2~retired".notes VALUES ('mine')"#)
            let run = try Self.expanded(on: connection, model: model)
            defer { run.end(on: connection) }
            #expect(throws: (any Error).self) { try ExpansionCompletion(connection: connection, store: S.store).complete(force: false) }
            let ended = try #require(run.result(), "the run did not stop")
            guard case .failure(let error) = ended else { Issue.record("the run switched over"); return }
            #expect("\(error)".contains(#""shop@Kitchen_2~retired" exists and was not made by orchestrator"#), "\(error)")
            #expect(try S.version(on: connection) == "Kitchen 1")
            #expect(try connection.execute(#"SELECT body FROM "shop@Kitchen_2~retired".notes"#).rows == [["mine"]])
        }
    }

    final class Outcome: @unchecked Sendable {
        private let lock = NSLock()
        private var text: String?
        var value: String? { lock.withLock { text } }
        func set(_ value: String) { lock.withLock { text = value } }
    }
}

/// The new version's views of the kitchen step as `plan --expand` lays them out.
enum NewVersionViewsFixture {
    static func planned(_ model: VersionedModel, forward: MappingModel, reverse: MappingModel?) throws -> NewVersionViews? {
        try plan(model, forward: forward, reverse: reverse).steps.first?.staged?.newVersionViews
    }

    static func plan(_ model: VersionedModel, forward: MappingModel, reverse: MappingModel?) throws -> MigrationPlan {
        let version = try #require(model.version(named: "Kitchen 1"))
        let hashes = VersionHash.hashes(of: version)
        let metadata = StoreMetadata(modelName: model.name, versionName: version.name, modelHash: hashes.model, entityHashes: hashes.entities, versionIdentifiers: [])
        let snapshot = StoreSnapshot(store: "shop", schemaExists: true, metadata: metadata)
        return try Planner.plan(
            model: model, snapshot: snapshot, explicitMappings: [ExplicitMapping(forward)] + (reverse.map { [ExplicitMapping($0)] } ?? []), mode: .expand
        )
    }
}
