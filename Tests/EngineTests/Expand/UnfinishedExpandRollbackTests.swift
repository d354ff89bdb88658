import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 25, point 5: `rollback` of a lightweight `apply --expand` stopped before its
/// switch-over. For every change kind the expand step serves (`ExpandChangeKind`), the run is
/// killed after each of its phases in turn, the old release writes meanwhile (and its twin,
/// left at v1, gets the same writes), and `rollback` with the model leaves a store equal to the
/// twin, row for row and object for object; a later `apply` gives the offline migration's
/// result. Then what the old version cannot hold, and the refusals.
@Suite(integration) struct UnfinishedExpandRollbackTests {
    typealias S = MigratedStore
    static let shadow = ExpandApplyTests.shadow

    static func options() -> ApplyOptions {
        var options = ApplyOptions(allowDataLoss: true, batchSize: 50, online: true)
        options.expand = true
        return options
    }

    /// `apply --expand` of `model` killed once `phases` of its phases are done.
    static func stop(_ model: VersionedModel, after phases: Int, on connection: PostgresConnection) throws {
        var done = 0
        let killed = try OnlineHeavyweightTests.crashOnlineRun(options: options(), on: connection, { StoreMigrator(connection: $0, model: model, store: S.store) }) { event in
            guard event.kind == .passFinished, event.stage == .online else { return false }
            done += 1
            return done == phases
        }
        #expect(killed, "the run ended before phase \(phases + 1)")
        #expect(try S.version(on: connection) == "v1" && ExpansionRecord.read(store: S.store, on: connection) == nil)
    }

    /// `body` once per phase before the switch-over, on a fresh store and its twin, the run
    /// killed after that phase (`stop`, 1-based); returns how many there were (none for a step
    /// of one phase, its switch-over).
    static func forEachStop(of model: VersionedModel, _ body: (PostgresConnection, _ url: String, _ stop: Int) throws -> Void) throws -> Int {
        var phases = 2
        var stop = 1
        while stop < phases {
            try ShadowedStore.with(model, store: S.store, shadow: shadow) { connection, url in
                phases = try StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .expand).steps[0].phases?.phases.count ?? 0
                guard stop < phases else { return }
                try Self.stop(model, after: stop, on: connection)
                try body(connection, url, stop)
            }
            stop += 1
        }
        return max(phases - 1, 0)
    }

    @Test(arguments: ExpandChangeKind.allCases)
    func anExpandStoppedAfterAnyPhaseRollsBackToTheOldVersionWithEveryWrite(kind: ExpandChangeKind) throws {
        let model = try kind.model()
        let stops = try Self.forEachStop(of: model) { connection, url, stop in
            // The old release writes on, as the run left the store (its plain views, when made).
            let writer = TwinWriter(url: url, live: S.store, twin: Self.shadow, rules: .throughViews, write: kind.oldRelease)
            for _ in 0..<20 { try connection.transaction { try kind.oldRelease(writer, connection) } }

            let rollback = ExpansionRollback(connection: connection, store: S.store, model: model)
            let dry = try rollback.rollBack(dryRun: true)
            #expect(dry.isDryRun && !dry.statements.isEmpty && dry.losses.allSatisfy { $0.rows == 0 }, "\(kind) after \(stop): \(dry)")
            #expect(try OnlineCheckpoint.unfinished(store: S.store, on: connection) != nil, "the dry run changed the store")
            let report = try rollback.rollBack()
            #expect(report.losses.allSatisfy { $0.rows == 0 } && report.version == "v1" && report.fromVersion == "v2", "\(kind) after \(stop): \(report)")
            #expect(try S.version(on: connection) == "v1")
            #expect(try OnlineCheckpoint.unfinished(store: S.store, on: connection) == nil)
            #expect(try connection.execute("SELECT count(*) AS n FROM pg_namespace WHERE nspname LIKE 'shop@%'").int(0, "n") == 0)
            #expect(try S.history(on: connection).last == "rollback v2 -> v1 succeeded")
            // The NULLs the run's backfill reached keep the default (as after apply --expand): the twin's too.
            if let (table, column) = kind.backfilled {
                try connection.execute("""
                    UPDATE \(ident: Self.shadow, table) AS t SET \(ident: column) = s.\(ident: column) FROM \(ident: S.store, table) AS s
                    WHERE t._pk = s._pk AND t.\(ident: column) IS NULL
                    """)
            }
            try TwinComparison.expectSameStore(S.store, asOfflineTwin: Self.shadow, on: connection)

            // As if the run never was: the offline step gives what it gives the twin.
            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(allowDataLoss: true))
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
        }
        print("\(kind): rolled back after each of its \(stops) phases before the switch-over")
    }

    /// More steps than the served change kinds: renames beside an added and a removed attribute,
    /// removed attributes and links (their constraints relaxed first), an entity and a link
    /// added, a sub-entity added. Killed after each phase, the old release writing meanwhile.
    enum Step: String, CaseIterable, Sendable {
        case renamedAddedAndRemoved, removedWithConstraints, entityAndLinkAdded, subEntityAdded

        func model() throws -> VersionedModel {
            switch self {
            case .renamedAddedAndRemoved:
                return try S.model([
                    ("v1", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: true}, note: string}}")),
                    ("v2", S.version("Recipe: {attributes: {title: {type: string, renamingIdentifier: name}, rating: {type: int16, optional: false, default: 3}, servings: {type: int32, optional: false, default: 2}}}")),
                ])
            case .removedWithConstraints:
                return try S.model([
                    ("v1", S.version("""
                        Recipe: {attributes: {name: string, code: {type: string, optional: false, default: x}}, relationships: {chef: {destination: Chef, inverse: recipes}}}
                        Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, toMany: true, inverse: chef}}}
                        """)),
                    ("v2", S.version("Recipe: {attributes: {name: string}}\nChef: {attributes: {name: string}}")),
                ])
            case .entityAndLinkAdded:
                return try S.model([
                    ("v1", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: true}}}")),
                    ("v2", S.version("""
                        Recipe: {attributes: {name: string, rating: {type: int16, optional: false, default: 3}}, relationships: {chef: {destination: Chef, inverse: recipes}}}
                        Chef: {attributes: {name: string}, relationships: {recipes: {destination: Recipe, toMany: true, inverse: chef}}}
                        """)),
                ])
            case .subEntityAdded:
                return try S.model([
                    ("v1", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: true}}}")),
                    ("v2", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: false, default: 3}}}\nSoup: {parent: Recipe, attributes: {bowls: int16}}")),
                ])
            }
        }
    }

    /// The old release's writes, by v1's names (its views first on its path, when there are
    /// any), and the same to the twin.
    static func oldReleaseWrites(on connection: PostgresConnection) throws {
        let writes: [(live: SQL, twin: SQL)] = [
            ("INSERT INTO recipe (_entity, name) VALUES ('Recipe', 'old') RETURNING _pk", "INSERT INTO recipe (_pk, _entity, name) OVERRIDING SYSTEM VALUE VALUES ($pk, 'Recipe', 'old')"),
            ("UPDATE recipe SET name = name || '+' WHERE _pk <= 5", "UPDATE recipe SET name = name || '+' WHERE _pk <= 5"),
            ("DELETE FROM recipe WHERE _pk = 11", "DELETE FROM recipe WHERE _pk = 11"),
        ]
        for write in writes {
            let key = try connection.transaction {
                try connection.execute("SET LOCAL search_path = \(ident: "shop@v1"), \(ident: S.store)")
                return try connection.execute(write.live).rows.first?.first ?? nil
            }
            try connection.transaction {
                try connection.execute("SET LOCAL search_path = \(ident: shadow)")
                try connection.execute(SQL(unsafeRaw: write.twin.text.replacingOccurrences(of: "$pk", with: key ?? "NULL")))
            }
        }
    }

    @Test(arguments: Step.allCases)
    func moreStepsStoppedAfterAnyPhaseRollBackWithEveryWrite(step: Step) throws {
        let model = try step.model()
        let stops = try Self.forEachStop(of: model) { connection, _, stop in
            try Self.oldReleaseWrites(on: connection)
            let report = try ExpansionRollback(connection: connection, store: S.store, model: model).rollBack()
            #expect(report.losses.allSatisfy { $0.rows == 0 }, "\(step) after \(stop): \(report.losses)")
            #expect(try S.version(on: connection) == "v1" && OnlineCheckpoint.unfinished(store: S.store, on: connection) == nil)
            // The NULLs the run's backfill reached keep the default: the twin's too.
            if step != .removedWithConstraints {
                try connection.execute("""
                    UPDATE \(ident: Self.shadow, "recipe") AS t SET rating = s.rating FROM \(ident: S.store, "recipe") AS s
                    WHERE t._pk = s._pk AND t.rating IS NULL
                    """)
            }
            try TwinComparison.expectSameStore(S.store, asOfflineTwin: Self.shadow, on: connection)
            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(allowDataLoss: true))
            if step == .entityAndLinkAdded {
                // The twins compare only tables holding rows: the new chef table has none.
                _ = try StoreMigrator(connection: connection, model: model, store: Self.shadow).apply()
                let rows: (String) throws -> [[String?]] = { try connection.execute("SELECT _pk, name, rating, chef_pk FROM \(ident: $0, "recipe") ORDER BY _pk").rows }
                #expect(try rows(S.store) == rows(Self.shadow) && S.version(on: connection) == "v2")
            } else {
                try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
            }
        }
        print("\(step): rolled back after each of its \(stops) phases before the switch-over")
    }

    /// A widened number is rebuilt beside the column before the switch-over: the rollback
    /// names it and changes nothing; `apply --expand` finishes the run.
    @Test func aStepThatRebuildsAColumnIsRefusedAndNothingChanges() throws {
        let model = try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: true}}}")),
            ("v2", S.version("Recipe: {attributes: {name: string, rating: {type: int32, optional: false, default: 3}}}")),
        ])
        try S.withStore(model) { connection in
            try Self.stop(model, after: 1, on: connection)
            let refused = try #require(throws: RollbackRefused.self) { try ExpansionRollback(connection: connection, store: S.store, model: model).rollBack() }
            #expect(refused.description.contains("[rollbackUnfinishedNotUndoable]"), "\(refused)")
            #expect(try OnlineCheckpoint.unfinished(store: S.store, on: connection) != nil)
            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: Self.options())
            #expect(try S.version(on: connection) == "v2")
        }
    }

    /// `servings` added, `rating` made required (a backfill, so the run stops before its end).
    static func addedAttribute() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: true}}}")),
            ("v2", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: false, default: 3}, servings: {type: int32, optional: true}}}")),
        ])
    }

    @Test func valuesWrittenIntoAnAddedColumnAreCountedAndNeedConsent() throws {
        let model = try Self.addedAttribute()
        try S.withStore(model) { connection in
            try connection.execute("UPDATE shop.recipe SET rating = NULL WHERE _pk % 3 = 0")
            try Self.stop(model, after: 2, on: connection)
            #expect(try connection.execute("SELECT count(*) AS n FROM information_schema.columns WHERE table_schema = 'shop' AND column_name = 'servings'").int(0, "n") == 1)
            // A new release started early writes the new column.
            try connection.execute("UPDATE shop.recipe SET servings = 4 WHERE _pk <= 3")
            let before = try connection.execute("SELECT _pk, name, rating FROM shop.recipe ORDER BY _pk").rows

            let rollback = ExpansionRollback(connection: connection, store: S.store, model: model)
            let dry = try rollback.rollBack(dryRun: true)
            #expect(dry.losses.filter { $0.rows > 0 }.map { "\($0.loss.code.rawValue): \($0.rows)" } == ["rollbackDropsValues: 3"], "\(dry.losses)")
            let refused = try #require(throws: DataLossNotAllowed.self) { try rollback.rollBack() }
            #expect("\(refused)".contains("recipe.servings (not in 'v1'): its values are dropped: 3 rows"), "\(refused)")
            #expect(try OnlineCheckpoint.unfinished(store: S.store, on: connection) != nil)

            let report = try rollback.rollBack(allowDataLoss: true)
            #expect(report.losses.map(\.rows).reduce(0, +) == 3)
            #expect(try connection.execute("SELECT _pk, name, rating FROM shop.recipe ORDER BY _pk").rows == before)
            #expect(try connection.execute("SELECT count(*) AS n FROM information_schema.columns WHERE table_schema = 'shop' AND column_name = 'servings'").int(0, "n") == 0)
            #expect(try DriftCheck.drift(of: S.store, from: model.version(named: "v1")!, on: connection).items.isEmpty)
        }
    }

    @Test func aRunStillPausedIsNamedThenForceEndsItAndRollsBack() throws {
        let model = try Self.addedAttribute()
        try S.withStore(model) { connection in
            try connection.execute("UPDATE shop.recipe SET rating = NULL WHERE _pk % 3 = 0")
            try StoreControls.set(store: S.store, paused: true, on: connection)
            var options = Self.options()
            options.batchSize = 10
            let run = try BackgroundApply(StoreMigrator(connection: connection, model: model, store: S.store), options: options, from: connection)
            defer { run.end(on: connection) }
            #expect(run.waitForEvent { $0.kind == .paused }, "the run never paused: \(run.events.suffix(3))")
            let rollback = ExpansionRollback(connection: connection, store: S.store, model: model)
            let refused = try #require(throws: ExpandedRunWaiting.self) { try rollback.rollBack() }
            #expect(refused.description.contains("the apply --expand run of 'v1' -> 'v2' is still under way, before its switch-over"), "\(refused)")
            #expect(!run.hasEnded)

            let report = try rollback.rollBack(force: true)
            #expect(!report.endedSessions.isEmpty && report.version == "v1")
            let ended = try #require(run.result(), "the run did not stop")
            #expect((try? ended.get()) == nil, "the run went on after the rollback")
            try StoreControls.set(store: S.store, paused: false, on: connection)
            #expect(try DriftCheck.drift(of: S.store, from: model.version(named: "v1")!, on: connection).items.isEmpty)
            #expect(try OnlineCheckpoint.unfinished(store: S.store, on: connection) == nil)
        }
    }

    @Test func withoutTheModelOrWithAnotherStepTheRollbackIsRefusedAndNothingChanges() throws {
        let model = try Self.addedAttribute()
        try S.withStore(model) { connection in
            try Self.stop(model, after: 2, on: connection)
            let bare = try #require(throws: UnfinishedExpansionNeedsModel.self) { try ExpansionRollback(connection: connection, store: S.store).rollBack() }
            #expect(bare.description.contains("rollback needs the model it ran with"), "\(bare)")
            // Another v2 than the run's: its plan is not the one the checkpoint names.
            let other = try S.model([
                ("v1", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: true}}}")),
                ("v2", S.version("Recipe: {attributes: {name: string, rating: {type: int16, optional: false, default: 4}, servings: {type: int32, optional: true}}}")),
            ])
            let refused = try #require(throws: RollbackRefused.self) { try ExpansionRollback(connection: connection, store: S.store, model: other).rollBack() }
            #expect(refused.description.contains("[rollbackUnfinishedOtherPlan]"), "\(refused)")
            #expect(try OnlineCheckpoint.unfinished(store: S.store, on: connection) != nil)
            #expect(try connection.execute("SELECT count(*) AS n FROM information_schema.columns WHERE table_schema = 'shop' AND column_name = 'servings'").int(0, "n") == 1)
        }
    }
}

extension ExpandChangeKind {
    /// The column a required attribute's backfill fills, with its default.
    var backfilled: (table: String, column: String)? {
        switch self {
        case .requiredWithDefault: ("recipe", "rating")
        case .requiredForASubEntity: ("dessert", "layers")
        default: nil
        }
    }
}
