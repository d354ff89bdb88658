import Testing
@testable import Planning

/// Values cleared in a shared column under `apply --online`: a column built anew beside it.
/// The change: Planning/Changes/ClearValues.swift.
@Suite struct ClearValuesTests: OnlineStepFixtures, RuleRows {
    @Test func valuesClearedInASharedColumnGoWithABuiltAnewColumnSwappedInAtTheSwitchOver() throws {
        let posts = { (reader: String) in
            """
            BasePost: {abstract: true, attributes: {title: string}}
            Post: {parent: BasePost, attributes: {likeCount: int32}, indexes: {byLikes: [likeCount]}}
            ReaderPost: {parent: BasePost, attributes: {likeCount: \(reader)}}
            Note: {parent: BasePost, attributes: {likeCount: string}}
            """
        }
        let phases = try Self.phases(posts("int32"), posts("int64"))
        let shadow = "orchestrator_online_new_\(OnlineTrigger.digest("base_post.like_count_integer"))"
        let (copy, wipe) = ("orchestrator_online_values_\(OnlineTrigger.digest("base_post.like_count_bigint"))", "orchestrator_online_wipe_\(OnlineTrigger.digest("base_post.like_count_integer"))")
        #expect(phases.flatMap(\.installs).map(\.name) == [copy, wipe])
        #expect(copy < wipe, "the copy reads the value before the new column leaves it out")
        #expect(phases.compactMap(\.batches).map(\.template.text).last == #"UPDATE "s"."base_post" SET "\#(shadow)" = CASE WHEN "_entity" IN ('ReaderPost') THEN NULL ELSE "like_count_integer" END WHERE TRUE AND "_pk" >= :from AND "_pk" < :to"#)
        #expect(!phases.flatMap(\.statements).contains { $0.sql.text.contains(#"SET "like_count_integer" = NULL"#) }, "the application reads the values until the switch-over")
        let index = try #require(phases.first { $0.execution == .outsideTransaction })
        #expect(index.statements.first?.sql.text.hasSuffix(#"ON "s"."base_post" ("\#(shadow)")"#) == true)
        let switchOver = try #require(phases.last).statements.map(\.sql.text)
        #expect(switchOver.suffix(3) == [
            #"ALTER TABLE "s"."base_post" DROP COLUMN "like_count_integer""#,
            #"ALTER TABLE "s"."base_post" RENAME COLUMN "\#(shadow)" TO "like_count_integer""#,
            #"ALTER INDEX "s"."\#(index.index!)" RENAME TO "base_post_by_likes_idx""#,
        ])
        #expect(switchOver.firstIndex { $0.contains("DROP TRIGGER IF EXISTS \"\(wipe)\"") }! < switchOver.count - 3)
    }

    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("moving a property down a hierarchy clears it in the rows of the entities that lost it",
              from: "Animal: {attributes: {name: string, bark: string}}\nDog: {parent: Animal}", to: M.animals, [
            #"UPDATE "s"."animal" SET "bark" = NULL WHERE "_entity" IN ('Animal') AND "bark" IS NOT NULL"#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
