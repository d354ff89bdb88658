import Foundation
import Testing
import ObjectModel
import Planning
import PostgresClient
import SQLBuilding
import TestSupport
@testable import Engine

/// Issue 12: `apply --online` of columns rebuilt beside the old ones under an index or
/// constraint they share (widened, or split with values cleared), and of values cleared in a
/// column the step then requires and indexes, while the application writes; the migrated store
/// equals an offline migration of the same final data, catalog and rows.
/// Proves Planning/Changes: AlterColumnType, ClearValues, CreateIndex, AddUnique, SetNotNull (with
/// Online/OnlineCoveringConstraints.swift, OnlineRebuildResolving.swift).
@Suite(integration) struct OnlineRebuiltCoveringMigrationTests {
    typealias S = MigratedStore
    typealias Columns = OnlineColumnMigrationTests

    /// Rating, servings and code widened; an index over the first two and a uniqueness
    /// constraint over the last two, built once over the new columns and named in one swap.
    @Test func twoWidenedColumnsUnderOneIndexAndOneUniquenessConstraintKeepEveryWrite() throws {
        let v1 = "Recipe: {attributes: {name: string, rating: int16, servings: int16, code: int16}, indexes: {byBoth: [rating, servings]}, uniquenessConstraints: [[code, servings]]}"
        let model = try S.model([("v1", S.version(v1)), ("v2", S.version(v1.replacingOccurrences(of: "int16", with: "int32")))])
        try Columns.migrateOnlineWhileWriting(model, write: { writer, connection in
            let (recipe, number) = (writer.random(1...400), writer.random(1...9000))
            let value: (Int) -> SQLValue = { $0 % 4 == 0 ? .null : .int(Int64($0)) }
            switch writer.random(0...4) {
            case 0:
                // Unique codes: the negated key, never a sample value.
                try Columns.insert("recipe", [("_entity", .text("Recipe")), ("name", .text("new")), ("rating", value(number)), ("servings", value(number / 3))], writer: writer, on: connection)
                try writer.both({ "UPDATE \(ident: $0, "recipe") SET code = -_pk WHERE _pk = (SELECT max(_pk) FROM \(ident: $0, "recipe"))" }, on: connection)
            case 1, 2:
                try writer.both({
                    "UPDATE \(ident: $0, "recipe") SET rating = \(value(number)), servings = \(value(number / 7)), code = CASE WHEN code IS NULL THEN -_pk END, name = name || '!' WHERE _pk = \(recipe)"
                }, on: connection)
            default:
                try writer.delete(from: "recipe", key: recipe, on: connection)
            }
        })
    }

    /// Posts whose siblings share two integer columns (docs/store-format.md); Post's index
    /// covers both and the widened rank.
    static func posts(reader: String, rank: String) -> String {
        S.version("""
            BasePost: {abstract: true, attributes: {title: string, rank: \(rank)}}
            Post: {parent: BasePost, attributes: {likeCount: int32, shareCount: int32}, indexes: {byCounts: [likeCount, shareCount, rank]}}
            ReaderPost: {parent: BasePost, attributes: {likeCount: \(reader), shareCount: \(reader)}}
            Note: {parent: BasePost, attributes: {likeCount: string, shareCount: string}}
            """)
    }

    /// ReaderPost's counts become bigints: both shared columns are split (ReaderPost's values
    /// copied out, cleared there) and rank widens; Post's index over all three is built over
    /// the three new columns and all swap at the switch-over.
    @Test func twoSplitColumnsAndAWidenedOneUnderOneIndexKeepEveryWrite() throws {
        let model = try S.model([("v1", Self.posts(reader: "int32", rank: "int16")), ("v2", Self.posts(reader: "int64", rank: "int32"))])
        let counts = ["like_count_integer", "share_count_integer", "rank"]
        try Columns.migrateOnlineWhileWriting(model, write: Columns.writePosts(columns: ["Post": counts, "ReaderPost": counts]))
    }

    /// ReaderPost's likeCount widens and takes Post's values, copied from Post's own column;
    /// ReaderPost's index covers it and shareCount, which Post leaves: the widened column swaps
    /// in at the switch-over with the split one, with the values copied while writes go on.
    @Test func aWidenedColumnSwappedInWithASplitOneKeepsTheValuesCopiedIntoIt() throws {
        let posts = { (post: String, postShares: String, reader: String) in S.version("""
            BasePost: {abstract: true, attributes: {title: string}}
            Post: {parent: BasePost, attributes: {likeCount: \(post), shareCount: \(postShares)}}
            ReaderPost: {parent: BasePost, attributes: {likeCount: \(reader), shareCount: int32}, indexes: {byCounts: [likeCount, shareCount]}}
            Note: {parent: BasePost, attributes: {likeCount: string, shareCount: string}}
            """) }
        let model = try S.model([("v1", posts("int16", "int32", "int32")), ("v2", posts("int64", "int64", "int64"))])
        let counts = Columns.writePosts(columns: ["Post": ["like_count_smallint", "share_count_integer"], "ReaderPost": ["share_count_integer"]])
        try Columns.migrateOnlineWhileWriting(model, write: { writer, connection in
            try counts(writer, connection)
            // ReaderPost's likeCount column takes its new name at its phase: the application finds it.
            let renamed = try connection.execute("""
                SELECT 1 FROM information_schema.columns WHERE table_schema = \(writer.live) AND table_name = 'base_post' AND column_name = 'like_count_bigint'
                """).rows.isEmpty == false
            let (post, count) = (writer.random(1...1000), writer.random(0...5000))
            try writer.both({
                "UPDATE \(ident: $0, "base_post") SET \(ident: renamed && $0 == writer.live ? "like_count_bigint" : "like_count_integer") = \(count) WHERE _pk = \(post) AND _entity = 'ReaderPost'"
            }, on: connection)
        })
    }

    /// Calories and the chef link move down from Dessert to Cake (cleared in the other
    /// desserts' rows); Cake's calories become required with a default, and indexed.
    static func movedDown() throws -> VersionedModel {
        try S.model([
            ("v1", S.version("""
                Chef: {attributes: {name: string}}
                Dessert: {attributes: {name: string, calories: int32}, relationships: {chef: {destination: Chef}}}
                Cake: {parent: Dessert}
                """)),
            ("v2", S.version("""
                Chef: {attributes: {name: string}}
                Dessert: {attributes: {name: string}}
                Cake: {parent: Dessert, attributes: {calories: {type: int32, optional: false, default: 0}}, relationships: {chef: {destination: Chef}}, indexes: {byCalories: [calories]}}
                """)),
        ])
    }

    /// First-version writes: desserts and cakes with calories (NULL too) and chefs, updated and
    /// deleted; chefs deleted (their links cleared by both foreign keys) and inserted.
    static func writeDesserts(_ w: TwinWriter, _ connection: PostgresConnection) throws {
        let (dessert, chef, calories) = (w.random(1...650), w.random(1...330), w.random(0...900))
        let value: SQLValue = calories % 4 == 0 ? .null : .int(Int64(calories))
        let link: (String) -> SQL = { "(SELECT _pk FROM \(ident: $0, "chef") WHERE _pk = \(literal: chef))" }
        switch w.random(0...6) {
        case 0:
            let entity = ["Dessert", "Cake"][w.random(0...1)]
            try w.insert(into: "dessert", columns: ["_entity", "name", "calories", "chef_pk"], values: { "\(literal: entity), 'new', \(value), \(link($0))" }, on: connection)
        case 1, 2:
            try w.both({ "UPDATE \(ident: $0, "dessert") SET calories = \(value), chef_pk = \(link($0)), name = name || '!' WHERE _pk = \(literal: dessert)" }, on: connection)
        case 3:
            try w.delete(from: "dessert", key: dessert, on: connection)
        case 4:
            try w.delete(from: "chef", key: chef, on: connection)
        default:
            try w.insert(into: "chef", columns: ["_entity", "name"], values: { _ in "'Chef', 'ann'" }, on: connection)
        }
    }

    @Test func valuesClearedInAColumnTheStepThenRequiresAndIndexesKeepEveryWriteAndTheForeignKey() throws {
        let model = try Self.movedDown()
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: OnlineMigrationTests.shadow, write: Self.writeDesserts) { connection, writer, _ in
            try OnlineRowMoveMigrationTests.migrateWhileWriting(model, writer: writer, allowDataLoss: true, on: connection)
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
            // Some links kept, each compared with the offline migration's above; not "more than
            // 100": the writer deletes rows and their links, more the longer a loaded run lasts.
            #expect(try connection.execute("SELECT count(*) AS n FROM shop.dessert WHERE chef_pk IS NOT NULL").int(0, "n")! > 0, "no link kept")
        }
    }

    /// Stopped at the foreign key built on the new chef column: the triggers stay and keep the
    /// rows written meanwhile right; `apply --restart` continues and ends as offline.
    @Test func anInterruptedRebuildUnderItsForeignKeyContinuesWithRestartAndLeavesNoTrigger() throws {
        let model = try Self.movedDown()
        try TwinWriter.withShadowedStore(model, store: S.store, shadow: OnlineMigrationTests.shadow, write: Self.writeDesserts) { connection, writer, _ in
            let failure = try writer.interruptedOnlineApply(model, blocking: "chef", allowDataLoss: true, on: connection)
            #expect(failure?.statement?.summary.hasPrefix("foreign key dessert_chef_pk_fkey -> chef on the new dessert.chef_pk") == true, "\(String(describing: failure))")
            #expect(try S.version(on: connection) == "v1")
            let left = try connection.execute("SELECT tgname FROM pg_trigger WHERE tgname LIKE 'orchestrator_online_wipe_%'").rows
            #expect(left.count == 2, "the triggers of both new columns stay while the step is unfinished: \(left)")
            _ = try StoreMigrator(connection: connection, model: model, store: S.store).apply(options: ApplyOptions(allowDataLoss: true, restart: true, batchSize: 7, online: true))
            writer.stop()
            #expect(writer.failure == nil, "a write failed before the switch-over: \(String(describing: writer.failure))")
            try OnlineMigrationTests.expectSameAsOfflineMigrationOfShadow(model, allowDataLoss: true, on: connection)
        }
    }
}
