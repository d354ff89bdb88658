import Foundation
import Testing
import Mapping
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// `apply --online` of a heavyweight step whose expressions read a source row through a to-one
/// relationship (`$source.chef.name`): a chef renamed while the step runs maps its recipes again.
@Suite(integration) struct OnlineKeyPathTests {
    typealias S = MigratedStore
    typealias Kitchen = HeavyweightMigrationTests
    typealias Online = OnlineHeavyweightTests

    /// The kitchen mapping, each recipe named after its chef.
    static func mapping() -> MappingModel {
        var mapping = Kitchen.kitchenMapping()
        mapping.entityMappings[1].attributeMappings.append(PropertyMappingDefinition(name: "name", valueExpression: "$source.chef.name"))
        return mapping
    }

    static func offlineMigration(after writes: [SQL]) throws -> [[String?]] {
        var migrated: [[String?]] = []
        try S.withStore(try Kitchen.kitchen()) { connection in
            for write in writes { try connection.execute(write) }
            _ = try Kitchen.migrator(try Kitchen.kitchen(), mapping(), on: connection).apply()
            migrated = try Online.snapshot(S.store, on: connection)
        }
        return migrated
    }

    @Test(arguments: [false, true])
    func recipesReadingAChefRenamedMeanwhileAreMappedAgain(streaming: Bool) throws {
        let model = try Kitchen.kitchen()
        try S.withStore(model) { connection in
            var migrator = Kitchen.migrator(model, Self.mapping(), on: connection)
            migrator.forceStreaming = streaming
            // Renames of chefs whose recipes the writer leaves alone, after the recipes are mapped.
            let renames: [SQL] = ["UPDATE shop.chef SET name = 'renamed late' WHERE _pk IN (SELECT chef_pk FROM shop.recipe WHERE _pk IN (40, 41))"]
            let script = OnlineApplyScript(
                writer: try TwinWriter.script(sessionsLike: connection, Online.concurrent), first: "ChefToChef", duringStageOne: Online.duringStageOne,
                last: "RecipeToRecipe", betweenRounds: Online.betweenRounds + renames
            )
            _ = try script.apply(migrator, on: connection)
            #expect(try S.version(on: connection) == "Kitchen 2")
            #expect(try connection.execute("SELECT name FROM shop.recipe WHERE _pk IN (40, 41) ORDER BY _pk").rows == [["renamed late"], ["renamed late"]])
            #expect(try connection.execute("""
                SELECT count(*) AS n FROM shop.recipe AS r JOIN shop.chef AS c ON c._pk = r.author_pk WHERE r.name IS DISTINCT FROM c.name
                """).int(0, "n") == 0, "every recipe bears its chef's name as the chef ends")
            let reference = try Self.offlineMigration(after: Online.duringStageOne + Online.concurrent + Online.betweenRounds + renames)
            let online = try Online.snapshot(S.store, on: connection)
            TwinComparison.expectSameRows(online, reference)
        }
    }
}
