import Testing
@testable import Planning

/// Values copied between sibling columns, and ordered links moved into a join table, under
/// `apply --online`: a trigger keeps rows written meanwhile right, batches do the rest.
@Suite struct OnlineSiblingAndLinkTests {
    static func posts(_ post: String) -> String {
        """
        BasePost: {abstract: true, attributes: {title: string}}
        Post: {parent: BasePost, attributes: {likeCount: \(post)}}
        ReaderPost: {parent: BasePost, attributes: {likeCount: int64}}
        """
    }

    @Test func valuesCopiedIntoTheSharedColumnGoThroughATriggerAndBatchesAndTheOldColumnGoesAtTheSwitchOver() throws {
        let phases = try OnlinePlannerTests.phases(Self.posts("int32"), Self.posts("int64"))
        let trigger = "orchestrator_online_values_\(OnlineTrigger.digest("base_post.like_count"))"
        let install = try #require(phases.first { $0.installs.map(\.name) == [trigger] })
        #expect(install.statements.first?.sql.text.contains(#"BEGIN IF NEW."_entity" IN ('Post') THEN NEW."like_count" := NEW."like_count_integer"::bigint; END IF; RETURN NEW; END"#) == true)
        #expect(phases.compactMap(\.batches).map(\.template.text) == [
            #"UPDATE "s"."base_post" SET "like_count" = "like_count_integer"::bigint WHERE "_entity" IN ('Post') AND "_pk" >= :from AND "_pk" < :to"#,
        ])
        #expect(phases.last?.statements.map(\.sql.text).last == #"ALTER TABLE "s"."base_post" DROP COLUMN "like_count_integer""#)
        #expect(trigger > "orchestrator_online__entity_", "fires after the entity renames' trigger")
    }

    @Test func valuesClearedInASharedColumnGoWithABuiltAnewColumnSwappedInAtTheSwitchOver() throws {
        let posts = { (reader: String) in
            """
            BasePost: {abstract: true, attributes: {title: string}}
            Post: {parent: BasePost, attributes: {likeCount: int32}, indexes: {byLikes: [likeCount]}}
            ReaderPost: {parent: BasePost, attributes: {likeCount: \(reader)}}
            Note: {parent: BasePost, attributes: {likeCount: string}}
            """
        }
        let phases = try OnlinePlannerTests.phases(posts("int32"), posts("int64"))
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

    static let cuisines = """
        Cuisine: {relationships: {recipes: {destination: Recipe, inverse: cuisine, toMany: true, ordered: true}}}
        Recipe: {attributes: {name: string}, relationships: {cuisine: {destination: Cuisine, inverse: recipes}}}
        """

    @Test func orderedLinksTakeTheirPositionFromTheRowTheyAreReadFrom() throws {
        let phases = try OnlinePlannerTests.phases(Self.cuisines, """
            Cuisine: {relationships: {recipes: {destination: Recipe, inverse: cuisines, toMany: true, ordered: true}}}
            Recipe: {attributes: {name: string}, relationships: {cuisines: {destination: Cuisine, inverse: recipes, toMany: true, ordered: true, renamingIdentifier: cuisine}}}
            """)
        let batch = try #require(phases.compactMap(\.batches).first { $0.template.text.hasPrefix("INSERT INTO") }).template.text
        let function = try #require(phases.flatMap(\.statements).first { $0.sql.text.contains("orchestrator_online_links_") && $0.sql.text.hasPrefix("CREATE OR REPLACE FUNCTION") }).sql.text
        // The kept order column, and 0 for the recipe's one cuisine, in the join table's order.
        #expect(batch == #"INSERT INTO "s"."cuisine__recipes" ("cuisine_pk", "recipes_pk", "recipes_order", "cuisines_order") SELECT "cuisine_pk", "_pk", "cuisine_order", 0 FROM "s"."recipe" WHERE "cuisine_pk" IS NOT NULL AND "_pk" >= :from AND "_pk" < :to FOR SHARE ON CONFLICT DO NOTHING"#)
        #expect(function.contains(#"OLD."cuisine_order" IS NOT DISTINCT FROM NEW."cuisine_order""#), "a new position alone moves the link")
        #expect(function.contains(#"VALUES (NEW."cuisine_pk", NEW."_pk", NEW."cuisine_order", 0) ON CONFLICT DO NOTHING"#))
    }
}
