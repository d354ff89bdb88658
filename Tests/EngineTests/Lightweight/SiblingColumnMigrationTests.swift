import Testing
import ObjectModel
import Planning
import PostgresClient
import TestSupport
@testable import Engine

/// Sibling sub-entities that declare the same property (docs/store-format.md, "Columns of a
/// hierarchy"), changed on a store holding rows: every row and value checked by `_pk`.
/// Proves Planning/Changes: CopyColumnValues, ClearValues, AddColumn, DropColumn.
@Suite(integration) struct SiblingColumnMigrationTests {
    typealias S = MigratedStore

    static func posts(post: String = "likeCount: int32", reader: String = "likeCount: int32", base: String = "title: string") -> String {
        S.version("""
            BasePost: {abstract: true, attributes: {\(base)}}
            Post: {parent: BasePost, attributes: {\(post)}}
            ReaderPost: {parent: BasePost, attributes: {\(reader)}}
            """)
    }

    /// `_pk, _entity, <columns>` of every post, ordered by `_pk`.
    static func posts(_ columns: [String], on connection: PostgresConnection) throws -> [[String?]] {
        try S.rows("base_post", ["_entity"] + columns, on: connection)
    }

    @Test func aSiblingGainingThePropertyWithTheSameTypeSharesTheColumn() throws {
        let model = try S.model([("v1", Self.posts(reader: "rank: int16")), ("v2", Self.posts(reader: "rank: int16, likeCount: int32"))])
        try S.withStore(model) { connection in
            let before = try Self.posts(["like_count"], on: connection)
            #expect(before.contains { $0[1] == "Post" && $0[2] != nil })
            try S.migrate(model, on: connection)
            #expect(try Self.posts(["like_count"], on: connection) == before)
            try connection.execute("INSERT INTO shop.base_post (_entity, like_count) VALUES ('ReaderPost', 7)")
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func aSiblingGainingThePropertyWithAnotherTypeGetsItsOwnColumnAndTheSharedOneIsRenamed() throws {
        let model = try S.model([("v1", Self.posts(reader: "rank: int16")), ("v2", Self.posts(reader: "rank: int16, likeCount: string"))])
        try S.withStore(model) { connection in
            let before = try Self.posts(["like_count"], on: connection)
            try S.migrate(model, on: connection)
            #expect(try Self.posts(["like_count_integer", "like_count_text"], on: connection) == before.map { $0 + [nil] })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func aSiblingLosingThePropertyLosesItsValuesOnly() throws {
        let model = try S.model([("v1", Self.posts()), ("v2", Self.posts(reader: "rank: int16"))])
        try S.withStore(model) { connection in
            let before = try Self.posts(["like_count"], on: connection)
            #expect(before.contains { $0[1] == "ReaderPost" && $0[2] != nil })
            #expect(throws: DataLossNotAllowed.self) { try S.migrate(model, on: connection) }
            try S.migrate(model, allowDataLoss: true, on: connection)
            #expect(try Self.posts(["like_count"], on: connection) == before.map { [$0[0], $0[1], $0[1] == "Post" ? $0[2] : nil] })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func thePropertyMovingUpToTheParentKeepsEveryValue() throws {
        let model = try S.model([("v1", Self.posts()), ("v2", Self.posts(post: "", reader: "", base: "title: string, likeCount: int32"))])
        try S.withStore(model) { connection in
            let before = try Self.posts(["title", "like_count"], on: connection)
            try S.migrate(model, on: connection)
            #expect(try Self.posts(["title", "like_count"], on: connection) == before)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func typesThatDivergeSplitTheSharedColumnKeepingEveryValue() throws {
        let model = try S.model([("v1", Self.posts()), ("v2", Self.posts(reader: "likeCount: int64"))])
        try S.withStore(model) { connection in
            let before = try Self.posts(["like_count"], on: connection)
            try S.migrate(model, on: connection)
            let expected = before.map { row in row[1] == "Post" ? row + [nil] : [row[0], row[1], nil, row[2]] }
            #expect(try Self.posts(["like_count_integer", "like_count_bigint"], on: connection) == expected)
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func typesThatAgreeAgainMergeTheColumnsKeepingEveryValue() throws {
        let model = try S.model([("v1", Self.posts(reader: "likeCount: int64")), ("v2", Self.posts(post: "likeCount: int64", reader: "likeCount: int64"))])
        try S.withStore(model) { connection in
            let before = try Self.posts(["like_count_integer", "like_count_bigint"], on: connection)
            #expect(before.contains { $0[1] == "Post" && $0[2] != nil } && before.contains { $0[1] == "ReaderPost" && $0[3] != nil })
            try S.migrate(model, on: connection)
            #expect(try Self.posts(["like_count"], on: connection) == before.map { [$0[0], $0[1], $0[1] == "Post" ? $0[2] : $0[3]] })
            try S.expectFollowsContract(model, on: connection)
        }
    }

    @Test func aSiblingGainingAToOneToAnotherDestinationRenamesTheColumnKeepingEveryLink() throws {
        func version(owned: String) -> String {
            S.version("""
                Person: {attributes: {name: string}}
                Team: {attributes: {name: string}}
                Group: {abstract: true, attributes: {title: string}}
                Joined: {parent: Group, relationships: {owner: {destination: Person}}}
                Owned: {parent: Group\(owned)}
                """)
        }
        let model = try S.model([("v1", version(owned: "")), ("v2", version(owned: ", relationships: {owner: {destination: Team}}"))])
        try S.withStore(model) { connection in
            let before = try S.rows("group", ["_entity", "owner_pk"], on: connection)
            #expect(before.contains { $0[1] == "Joined" && $0[2] != nil })
            try S.migrate(model, on: connection)
            #expect(try S.rows("group", ["_entity", "owner_person_pk", "owner_team_pk"], on: connection) == before.map { $0 + [nil] })
            try connection.execute("UPDATE shop.\"group\" SET owner_team_pk = (SELECT min(_pk) FROM shop.team) WHERE _entity = 'Owned'")
            try S.expectFollowsContract(model, on: connection)
        }
    }
}
