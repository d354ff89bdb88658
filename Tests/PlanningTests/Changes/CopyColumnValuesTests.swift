import Testing
@testable import Planning

/// Values copied between sibling columns under `apply --online`: a trigger keeps rows written
/// meanwhile right, batches do the rest.
/// The change: Planning/Changes/CopyColumnValues.swift.
@Suite struct CopyColumnValuesTests: OnlineStepFixtures {
    static func posts(_ post: String) -> String {
        """
        BasePost: {abstract: true, attributes: {title: string}}
        Post: {parent: BasePost, attributes: {likeCount: \(post)}}
        ReaderPost: {parent: BasePost, attributes: {likeCount: int64}}
        """
    }

    @Test func valuesCopiedIntoTheSharedColumnGoThroughATriggerAndBatchesAndTheOldColumnGoesAtTheSwitchOver() throws {
        let phases = try Self.phases(Self.posts("int32"), Self.posts("int64"))
        let trigger = "orchestrator_online_values_\(OnlineTrigger.digest("base_post.like_count"))"
        let install = try #require(phases.first { $0.installs.map(\.name) == [trigger] })
        #expect(install.statements.first?.sql.text.contains(#"BEGIN IF NEW."_entity" IN ('Post') THEN NEW."like_count" := NEW."like_count_integer"::bigint; END IF; RETURN NEW; END"#) == true)
        #expect(phases.compactMap(\.batches).map(\.template.text) == [
            #"UPDATE "s"."base_post" SET "like_count" = "like_count_integer"::bigint WHERE "_entity" IN ('Post') AND "_pk" >= :from AND "_pk" < :to"#,
        ])
        #expect(phases.last?.statements.map(\.sql.text).last == #"ALTER TABLE "s"."base_post" DROP COLUMN "like_count_integer""#)
        #expect(trigger > "orchestrator_online__entity_", "fires after the entity renames' trigger")
    }
}
