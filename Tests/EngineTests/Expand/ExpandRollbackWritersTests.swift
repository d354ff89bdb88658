import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// The writers of `ExpandApplyTests` run through `rollback`: an old release writing through
/// the views before, during and after `apply --expand` (`note` too, the attribute v2 removes:
/// kept in its column until `complete`, so the rollback keeps it), and on through the rollback, its
/// `search_path` falling through to the store's tables once the views are gone; a new release
/// writing the tables until it is withdrawn. The rolled-back store equals its twin, which stayed
/// at v1 and received every write in v1's shape.
@Suite(integration) struct ExpandRollbackWritersTests {
    typealias S = MigratedStore
    static let shadow = ExpandApplyTests.shadow
    static let views = ExpandApplyTests.views

    @Test func anOldReleaseWritesThroughExpandAndRollbackAndTheStoreEqualsItsTwinAtV1() throws {
        let model = try ExpandApplyTests.model()
        try ShadowedStore.with(model, store: S.store, shadow: Self.shadow) { connection, url in
            let old = TwinWriter(url: url, live: S.store, twin: Self.shadow, rules: .rolling, write: ExpandApplyTests.oldRelease)
            let new = TwinWriter(url: url, live: S.store, twin: Self.shadow, rules: .concurrent, write: ExpandApplyTests.newRelease)
            var running = [old]
            defer { running.forEach { $0.stop() } }
            old.start()
            old.waitForCommits(20)
            _ = try ExpandApplyTests.expand(model, on: connection)
            old.waitForCommits(old.commits + 20)

            let report = try Self.newReleaseThenRollback(old: old, new: new, on: connection)
            #expect(report.losses.allSatisfy { $0.rows == 0 } && report.endedSessions.isEmpty, "\(report.losses)")
            #expect(try S.version(on: connection) == "v1")
            let afterRollback = old.commits
            old.waitForCommits(afterRollback + 20)
            old.stop()
            running.removeAll { $0 === old }
            #expect(old.failure == nil, "\(String(describing: old.failure))")
            #expect(old.commits >= afterRollback + 20, "the old release stopped writing after the rollback: \(old.refused)")
            #expect(new.commits >= 20)

            #expect(try S.history(on: connection).suffix(2) == ["expand v1 -> v2 succeeded", "rollback v2 -> v1 succeeded"])
            // The old release wrote notes (through the views while expanded): they are there, as in the twin.
            #expect(try connection.execute("SELECT count(*) AS n FROM \(ident: S.store, "recipe") WHERE note = 'kept'").int(0, "n") ?? 0 > 0)
            try TwinComparison.expectSameStore(S.store, asOfflineTwin: Self.shadow, on: connection)
        }
    }
}

extension ExpandRollbackWritersTests {
    /// The new release writes 20 transactions and is withdrawn; then `rollback`, the old
    /// release paused between two transactions, as a rollback finds it when it is idle.
    static func newReleaseThenRollback(old: TwinWriter, new: TwinWriter, on connection: PostgresConnection) throws -> RollbackReport {
        defer { new.stop() }
        new.start()
        new.waitForCommits(20)
        new.stop()
        #expect(new.failure == nil, "\(String(describing: new.failure))")
        old.pause()
        defer { old.resume() }
        return try ExpansionRollback(connection: connection, store: S.store).rollBack(options: ApplyOptions(lockTimeoutMilliseconds: 2000))
    }
}
