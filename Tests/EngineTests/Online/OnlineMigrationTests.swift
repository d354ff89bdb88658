import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 12: `apply --online` of lightweight steps while the application writes.
/// Proves Planning/Changes: AddColumn, AddUnique, CreateIndex, BackfillNulls, SetNotNull.
@Suite(integration) struct OnlineMigrationTests {
    typealias S = MigratedStore
    static let shadow = "shadow"

    /// Every online technique in one step: NULLs backfilled (a root entity and a sub-entity)
    /// and NOT NULL through a validated check, two columns widened (one NOT NULL) beside the
    /// old ones and swapped in, a renamed sub-entity's `_entity` rewritten, a
    /// to-one made to-many (links moved into a join table, kept in sync by a trigger), foreign
    /// keys and checks added NOT VALID and validated, indexes built concurrently.
    static func model() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("""
                Cuisine: {attributes: {name: {type: string, optional: false}}, relationships: {recipes: {destination: Recipe, inverse: cuisine, toMany: true}}}
                Recipe: {attributes: {name: {type: string, optional: false}, rating: int16, servings: {type: int16, optional: false, default: 1}}, relationships: {cuisine: {destination: Cuisine, inverse: recipes}, ingredients: {destination: Ingredient, inverse: recipe, toMany: true, deleteRule: cascade}}}
                Ingredient: {attributes: {name: {type: string, optional: false}, amount: string, grams: int16}, relationships: {recipe: {destination: Recipe, inverse: ingredients}}}
                Dessert: {attributes: {name: string}}
                Cake: {parent: Dessert, attributes: {layers: int16}}
                """)),
            ("v2", S.version("""
                Cuisine: {attributes: {name: {type: string, optional: false}}, relationships: {recipes: {destination: Recipe, inverse: cuisines, toMany: true}}}
                Recipe: {attributes: {name: {type: string, optional: false}, rating: {type: int16, optional: false, default: 0}, servings: {type: int32, optional: false, default: 1}, summary: string}, relationships: {cuisines: {destination: Cuisine, inverse: recipes, toMany: true, renamingIdentifier: cuisine}, ingredients: {destination: Ingredient, inverse: recipe, toMany: true, deleteRule: cascade}}, indexes: {byName: [name]}}
                Ingredient: {attributes: {name: {type: string, optional: false}, amount: string, grams: int32}, relationships: {recipe: {destination: Recipe, inverse: ingredients}}, indexes: {byAmount: [amount]}}
                Dessert: {attributes: {name: string}}
                Gateau: {parent: Dessert, renamingIdentifier: Cake, attributes: {layers: {type: int16, optional: false, default: 1}}}
                """)),
        ])
    }

    @Test func everyWriteCommittedDuringAnOnlineMigrationIsInTheMigratedStore() throws {
        let model = try Self.model()
        try ShadowedStore.with(model, store: S.store, shadow: Self.shadow) { connection, url in
            let step = try #require(StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .online).steps.first)
            let online = try #require(step.phases)
            #expect(online.isSupported, "\(online.refusals)")

            let writer = RecipeWrites.writer(url: url, live: S.store, shadow: Self.shadow)
            writer.start()
            writer.waitForCommits(5)
            let before = writer.commits
            let report = try StoreMigrator(connection: connection, model: model, store: S.store)
                .apply(options: ApplyOptions(batchSize: 7, online: true), onProgress: { writer.interleave($0, untilCommitted: 20, since: before) })
            let during = writer.commits - before
            writer.stop()
            print("online migration: \(during) writer transactions committed while apply --online ran, \(writer.commits) in all; first failure: \(writer.failure.map { "\($0.error)" } ?? "none")")
            #expect(report.appliedSteps.count == 1)
            #expect(during >= 20, "the writer barely wrote during the migration: the test proves little")
            if let failure = writer.failure {
                #expect(failure.afterSwitchOver, "a write failed before the switch-over: \(failure.error)")
            }
            try Self.expectSameAsOfflineMigrationOfShadow(model, on: connection)
        }
    }

    /// A phase that cannot get its lock stops the run after the backfills: the triggers stay
    /// (they keep the rows written meanwhile right), the metadata names the source version, and
    /// a plain `apply` continues from the checkpoint and removes them in the switch-over.
    @Test func anInterruptedOnlineMigrationContinuesWithPlainApplyAndLeavesNoTrigger() throws {
        let model = try Self.model()
        try ShadowedStore.with(model, store: S.store, shadow: Self.shadow) { connection, url in
            let writer = RecipeWrites.writer(url: url, live: S.store, shadow: Self.shadow)
            let failure = try writer.interruptedOnlineApply(model, .lockedBeforeTheRun("cuisine"), lockTimeoutMilliseconds: 2000, on: connection)
            #expect(failure?.statement?.summary == "foreign key cuisine__recipes.cuisine_pk -> cuisine, for new writes")
            #expect(failure.map { String(describing: $0) }?.contains("run apply again to continue") == true)
            #expect(try S.version(on: connection) == "v1")
            let left = try connection.execute("SELECT tgname FROM pg_trigger WHERE tgname LIKE 'orchestrator_online_%' ORDER BY 1").rows
            #expect(left.count == 5, "the interrupted run's triggers (two backfills, an entity rename, the links and what follows a truncate of their table; the widenings were swapped in): \(left)")
            writer.expectWritesWhileUnfinished()

            // The writes while the run continues are waited for, two before each of its phases
            // (it has 6): left to the threads' scheduling, the ten writes expected depended on
            // how a loaded machine ran the writer's thread against the continuation's short
            // phases.
            let before = writer.commits
            var phases = 0
            let report = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(batchSize: 7), onProgress: { event in
                guard event.kind == .passStarted, event.stage == .online else { return }
                phases += 1
                writer.waitForCommits(writer.commits + 2)
            })
            #expect(report.appliedSteps.count == 1)
            writer.stop()
            print("online migration continued: \(writer.commits - before) writer transactions committed over its \(phases) phases")
            #expect(writer.commits - before >= 10, "the writer barely wrote while the migration continued")
            if let failure = writer.failure {
                #expect(failure.afterSwitchOver, "a write failed before the switch-over: \(failure.error)")
            }
            try Self.expectSameAsOfflineMigrationOfShadow(model, on: connection)
        }
    }

    /// A uniqueness constraint (root entity: `UNIQUE USING INDEX` on an index built
    /// concurrently; sub-entity: a partial unique index) and a fetch index, with an attribute
    /// added (constraints alone change no version hash), on tables with rows:
    /// the catalog is the one a fresh store of the version has.
    @Test func uniquenessConstraintsAndIndexesAddedOnlineGiveTheContractCatalog() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, code: string}}\nDessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {sku: string}}")),
            ("v2", S.version("Recipe: {attributes: {name: string, code: string, notes: string}, uniquenessConstraints: [[code]], indexes: {byName: [name]}}\nDessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {sku: string}, uniquenessConstraints: [[sku]]}")),
        ])
        try S.withStore(model) { connection in
            let before = try S.rows("recipe", ["name", "code"], on: connection)
            let report = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(online: true))
            #expect(report.appliedSteps.count == 1)
            #expect(try S.rows("recipe", ["name", "code"], on: connection) == before)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    /// The live store equals the shadow store (the same writes, never migrated online) once the
    /// shadow is migrated offline: catalog and every row; no trigger or checkpoint is left.
    static func expectSameAsOfflineMigrationOfShadow(
        _ model: VersionedModel, allowDataLoss: Bool = false, on connection: PostgresConnection, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        _ = try StoreMigrator(connection: connection, model: model, store: shadow).apply(options: ApplyOptions(allowDataLoss: allowDataLoss))
        try TwinComparison.expectSameStore(S.store, asOfflineTwin: shadow, on: connection, sourceLocation: sourceLocation)
        #expect(try S.version(on: connection) == "v2", sourceLocation: sourceLocation)
        let triggers = try connection.execute("SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = to_regnamespace(\(S.store)) AND NOT t.tgisinternal")
        #expect(triggers.rows.first?.first == "0", "a trigger was left on the store", sourceLocation: sourceLocation)
        let functions = try connection.execute("SELECT count(*) FROM pg_proc WHERE proname LIKE 'orchestrator_online_%'")
        #expect(functions.rows.first?.first == "0", sourceLocation: sourceLocation)
        #expect(try connection.execute("SELECT count(*) FROM orchestrator.online_progress").rows.first?.first == "0", sourceLocation: sourceLocation)
    }
}
