import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Every change kind of issue 25's point 2 (`ExpandChangeKind`) with two releases writing at
/// once: the old one by v1's names through `"shop@v1"` before, during and after
/// `apply --expand`, the new one by v2's names on the store's tables after it and until
/// `complete`. The old release reads through its views what both wrote, in v1's shape; the
/// completed store equals the offline migration of the same writes, row for row.
@Suite(integration) struct ExpandChangeKindWritersTests {
    typealias S = MigratedStore
    static let shadow = ExpandApplyTests.shadow

    @Test(arguments: ExpandChangeKind.allCases)
    func anOldAndANewReleaseWriteThroughExpandAndCompleteAndTheStoreEqualsItsOfflineTwin(kind: ExpandChangeKind) throws {
        let model = try kind.model()
        try ShadowedStore.with(model, store: S.store, shadow: Self.shadow) { connection, url in
            // Only a deadlock is tried again: a table or column the old release misses fails it.
            let old = TwinWriter(url: url, live: S.store, twin: Self.shadow, rules: .throughViews, write: kind.oldRelease)
            var running = [old]
            defer { running.forEach { $0.stop() } }
            old.start()
            old.waitForCommits(20)
            let phases = try Self.expand(model, waitingFor: old, on: connection)
            #expect(try S.version(on: connection) == "v2")
            let afterExpand = old.commits
            old.waitForCommits(afterExpand + 20)
            #expect(old.commits >= afterExpand + 20, "the old release stopped writing after apply --expand: \(String(describing: old.failure))")

            let new = TwinWriter(url: url, live: S.store, twin: Self.shadow, rules: .concurrent, write: kind.newRelease)
            running.append(new)
            new.start()
            new.waitForCommits(20)
            old.waitForCommits(old.commits + 20)

            // Both paused between transactions: the old release reads every row, its own and
            // the new release's, as v1 holds them.
            old.pause()
            new.pause()
            let (table, columns, twinColumns) = kind.compared
            let twin = try connection.execute("SELECT \(SQL.joined(twinColumns, separator: ", ")) FROM \(ident: Self.shadow, table) ORDER BY 1, 2").rows
            TwinComparison.expectSameRows(try ServedVersion.old(table, columns, on: connection), twin)
            #expect(twin.count > 250)
            old.resume()
            new.resume()

            old.stop()
            running.removeAll { $0 === old }
            #expect(old.failure == nil, "\(String(describing: old.failure))")
            _ = try ExpansionCompletion(connection: connection, store: S.store).complete(force: false)
            new.waitForCommits(new.commits + 5)
            new.stop()
            running.removeAll { $0 === new }
            #expect(new.failure == nil, "\(String(describing: new.failure))")
            #expect(old.commits >= 40 + 2 * phases && new.commits >= 20)
            print("\(kind): the old release committed \(old.commits) transactions (\(phases) phases), the new one \(new.commits); retried \(old.refused)")
            #expect(try S.history(on: connection).suffix(2) == ["expand v1 -> v2 succeeded", "complete v1 -> v2 succeeded"])
            if let order = kind.addedOrder { try Self.expectPositionsThenTakeTheTwins(order, model: model, on: connection) }
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
        }
    }

    /// "and back": a to-many made to-one again cannot be inferred (which link would the to-one
    /// keep?), so `plan --expand` refuses it (`notInferable`), naming the entity and the
    /// relationship, and `apply --expand` changes nothing.
    @Test func aToManyMadeToOneIsRefusedByPlanExpandAndNothingChanges() throws {
        let chef = OldVersionLinkViewTests.chefAndRecipes
        let model = try S.model([
            ("v1", chef("destination: Chef, inverse: recipes, toMany: true", "destination: Recipe, inverse: chef, toMany: true")),
            ("v2", chef("destination: Chef, inverse: recipes", "destination: Recipe, inverse: chef, toMany: true")),
        ])
        try S.withStore(model, rows: 20) { connection in
            let links = try connection.execute("SELECT count(*) FROM shop.chef__recipes").rows
            let plan = try StoreMigrator(connection: connection, model: model, store: S.store).plan(mode: .expand)
            #expect(plan.blockerDetails.map(\.code) == [.notInferable], "\(plan.blockers)")
            #expect(plan.blockers == ["'v1' -> 'v2': entity Recipe, property chef: changed from to-many to to-one; rows linked to several objects would lose links (write a mapping model)"])
            #expect(throws: NotExecutable.self) { try ExpandApplyTests.expand(model, on: connection) }
            #expect(try S.version(on: connection) == "v1")
            #expect(try connection.execute("SELECT count(*) FROM shop.chef__recipes").rows == links)
        }
    }

    /// `apply --expand`, the old release committing two transactions before each phase: some
    /// run in every window between two phases. The number of phases.
    static func expand(_ model: VersionedModel, waitingFor old: TwinWriter, on connection: PostgresConnection) throws -> Int {
        var options = ApplyOptions(allowDataLoss: true, batchSize: 50, online: true)
        options.expand = true
        var phases = 0
        _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: options, onProgress: { event in
            guard event.kind == .passStarted, event.stage == .online else { return }
            phases += 1
            old.waitForCommits(old.commits + 2)
        })
        return phases
    }

    /// A relationship made ordered: v1 has no order, so the offline migration numbers each
    /// owner's links by key, and the live store keeps the order the releases gave (a link the
    /// old release added goes last). Each owner's positions must be distinct and set exactly on
    /// its links; then the twin's positions are taken, for the rest to be compared.
    static func expectPositionsThenTakeTheTwins(_ order: ExpandChangeKind.AddedOrder, model: VersionedModel, on connection: PostgresConnection) throws {
        let (table, owner, column) = (order.table, order.owner, order.column)
        let shared = try connection.execute("SELECT \(ident: owner), \(ident: column) FROM \(ident: S.store, table) WHERE \(ident: owner) IS NOT NULL GROUP BY 1, 2 HAVING count(*) > 1").rows
        #expect(shared.isEmpty, "two links of one owner share a position: \(shared)")
        let unlinked = try connection.execute("SELECT count(*) FROM \(ident: S.store, table) WHERE (\(ident: owner) IS NULL) <> (\(ident: column) IS NULL)").rows
        #expect(unlinked == [["0"]], "positions without an owner, or links without a position: \(unlinked)")
        _ = try StoreMigrator(connection: connection, model: model, store: shadow).apply(options: ApplyOptions(allowDataLoss: true))
        let matched = SQL.joined(order.keys.map { "t.\(ident: $0) = l.\(ident: $0)" }, separator: " AND ")
        try connection.execute("UPDATE \(ident: S.store, table) AS l SET \(ident: column) = t.\(ident: column) FROM \(ident: shadow, table) AS t WHERE \(matched)")
    }

    /// A sample of the kinds rolled back instead (a to-one made to-many cannot be): the old
    /// release writes on through `rollback`, its `search_path` falling through to the tables
    /// at v1 again; the store equals its twin, which stayed at v1.
    @Test(arguments: [ExpandChangeKind.unorderedMadeOrdered, .manyToManyMadeOrdered, .movedBelowANewParent, .renamedAndMovedBelowANewParent, .rootGivenAParent, .entityRenamed])
    func anOldReleaseWritesThroughExpandAndRollbackAndTheStoreEqualsItsTwinAtV1(kind: ExpandChangeKind) throws {
        let model = try kind.model()
        try ShadowedStore.with(model, store: S.store, shadow: Self.shadow) { connection, url in
            let old = TwinWriter(url: url, live: S.store, twin: Self.shadow, rules: .rolling, write: kind.oldRelease)
            let new = TwinWriter(url: url, live: S.store, twin: Self.shadow, rules: .concurrent, write: kind.newRelease)
            var running = [old]
            defer { running.forEach { $0.stop() } }
            old.start()
            old.waitForCommits(20)
            _ = try Self.expand(model, waitingFor: old, on: connection)
            old.waitForCommits(old.commits + 20)
            let report = try ExpandRollbackWritersTests.newReleaseThenRollback(old: old, new: new, on: connection)
            #expect(report.losses.allSatisfy { $0.rows == 0 }, "\(report.losses)")
            #expect(try S.version(on: connection) == "v1")
            let afterRollback = old.commits
            old.waitForCommits(afterRollback + 20)
            old.stop()
            running.removeAll { $0 === old }
            #expect(old.failure == nil, "\(String(describing: old.failure))")
            #expect(old.commits >= afterRollback + 20, "the old release stopped writing after the rollback: \(old.refused)")
            #expect(try S.history(on: connection).suffix(2) == ["expand v1 -> v2 succeeded", "rollback v2 -> v1 succeeded"])
            try TwinComparison.expectSameStore(S.store, asOfflineTwin: Self.shadow, on: connection)
        }
    }
}
