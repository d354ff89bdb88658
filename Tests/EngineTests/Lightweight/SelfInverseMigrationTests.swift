import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// A relationship that is its own inverse (`Person.friends`), changed on a store holding rows:
/// its one join table keeps every link and gets one order column.
/// Proves Planning/Changes: FillJoinTable, FillOrderColumn.
@Suite(integration) struct SelfInverseMigrationTests {
    typealias S = MigratedStore

    static func version(ordered: Bool) -> String {
        S.version("Person: {attributes: {name: string}, relationships: {friends: {destination: Person, inverse: friends, toMany: true, ordered: \(ordered)}}}")
    }

    @Test func makingASelfInverseToManyOrderedKeepsEveryLinkAndNumbersThem() throws {
        let model = try S.model([("v1", Self.version(ordered: false)), ("v2", Self.version(ordered: true))])
        try S.withStore(model) { connection in
            let links = try connection.execute("SELECT person_pk, friends_pk FROM shop.person__friends ORDER BY 1, 2").rows
            #expect(links.count == 600)
            try S.migrate(model, on: connection)
            #expect(try connection.execute("SELECT person_pk, friends_pk FROM shop.person__friends ORDER BY 1, 2").rows == links)
            // Each person's friends numbered from 0 in the order of their keys.
            let misplaced = try connection.execute("""
                SELECT count(*) AS n FROM (SELECT friends_order, (row_number() OVER (PARTITION BY person_pk ORDER BY friends_pk) - 1)::integer AS expected
                FROM shop.person__friends) o WHERE friends_order IS DISTINCT FROM expected
                """).int(0, "n")
            #expect(misplaced == 0)
            try S.expectFollowsContract(model, on: connection)
        }
    }
}
