import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// The row change log's ids are taken when a write happens and seen when it commits: a write
/// that commits after a round mapped a later id must still be mapped by a later round.
@Suite(integration) struct OnlineLateCommitTests {
    typealias S = MigratedStore
    typealias Kitchen = HeavyweightMigrationTests

    @Test func aWriteCommittingAfterARoundMappedALaterOneIsStillMapped() throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            let early = try connection.reconnect()
            defer { early.close() }
            var options = ApplyOptions()
            options.online = true
            options.catchUpRemainder = 0
            var rounds = 0
            var hookFailure: Error?
            _ = try Kitchen.migrator(model, Kitchen.kitchenMapping(), on: connection).apply(options: options, onProgress: { event in
                do {
                    switch (event.kind, event.stage, event.entityMapping) {
                    case (.passFinished, .pass(.createInstances), "RecipeToRecipe"):
                        // The early write takes its log id first, the later one commits first.
                        try early.execute("BEGIN")
                        try early.execute("INSERT INTO shop.chef (_pk, _entity, name) VALUES (500001, 'Chef', 'committed late')")
                        try connection.execute("INSERT INTO shop.chef (_pk, _entity, name) VALUES (500002, 'Chef', 'committed early')")
                    case (.rows, .catchUp, _):
                        rounds += 1
                        if rounds == 1 { try early.execute("COMMIT") }
                    default:
                        break
                    }
                } catch {
                    hookFailure = error
                }
            })
            #expect(hookFailure == nil, "\(String(describing: hookFailure))")
            #expect(rounds >= 2, "a round ran after the late commit")
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try connection.execute("""
                SELECT string_agg(name, ', ' ORDER BY name) AS names FROM shop.chef WHERE name LIKE 'committed %'
                """).value(0, "names") == "committed early, committed late")
        }
    }
}
