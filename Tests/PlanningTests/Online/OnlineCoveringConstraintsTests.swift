import Testing
@testable import Planning

/// A widened column covered by indexes and constraints: `apply --online` builds them on the new
/// column while writes go on, and they take their names in the swap. Proves what
/// Online/OnlineCoveringConstraints.swift and OnlineRebuildResolving.swift add to the rebuilt
/// columns of Changes/AlterColumnType.swift and Changes/ClearValues.swift.
@Suite struct OnlineCoveringConstraintsTests: OnlineStepFixtures {
    static let source = """
        Recipe: {attributes: {rating: int16, code: int16, name: string}, indexes: {byRating: [rating, name]}, uniquenessConstraints: [[code]]}
        Dessert: {attributes: {name: string}}
        Cake: {parent: Dessert, attributes: {layers: {type: int16, optional: false, default: 1}, sku: int16}, uniquenessConstraints: [[sku]]}
        """
    static let destination = source.replacingOccurrences(of: "int16", with: "int32")

    static func sql(_ phases: [OnlinePhase]) -> [String] {
        phases.flatMap(\.statements).map(\.sql.text)
    }

    @Test func anIndexAndAUniquenessConstraintOverAWidenedColumnAreBuiltConcurrentlyOnTheNewColumnAndTakeTheirNamesInTheSwap() throws {
        let phases = try Self.phases(Self.source, Self.destination)
        let layout = StoreLayout(version: try InferenceFixtures.version(Self.destination, name: "d"), schema: "s")
        let recipe = try #require(layout.table(named: "recipe"))
        let index = try #require(recipe.indexes.first { $0.columns == ["rating", "name"] })
        let unique = try #require(recipe.uniqueConstraints.first { $0.columns == ["code"] })
        let rating = "orchestrator_online_new_\(OnlineTrigger.digest("recipe.rating"))"
        let code = "orchestrator_online_new_\(OnlineTrigger.digest("recipe.code"))"
        let (temporaryIndex, temporaryUnique) = (CoveringConstraint.index(index).temporaryName(on: "recipe"), CoveringConstraint.unique(unique).temporaryName(on: "recipe"))

        let built = phases.filter { $0.execution == .outsideTransaction }
        #expect(built.map(\.index).contains(temporaryIndex) && built.map(\.index).contains(temporaryUnique))
        #expect(Self.sql(built).contains(#"CREATE INDEX CONCURRENTLY "\#(temporaryIndex)" ON "s"."recipe" ("\#(rating)", "name")"#))
        #expect(Self.sql(built).contains(#"CREATE UNIQUE INDEX CONCURRENTLY "\#(temporaryUnique)" ON "s"."recipe" ("\#(code)")"#))

        // Built after the batches that fill the new column, before its swap.
        let swapOfRating = try #require(phases.firstIndex { $0.statements.contains { $0.sql.text.contains(#"RENAME COLUMN "\#(rating)""#) } })
        let batchesOfRating = try #require(phases.firstIndex { $0.batches?.template.text.contains(rating) == true })
        let buildOfIndex = try #require(phases.firstIndex { $0.index == temporaryIndex })
        #expect(batchesOfRating < buildOfIndex && buildOfIndex < swapOfRating)
        #expect(phases[swapOfRating].statements.map(\.sql.text).suffix(3) == [
            #"ALTER TABLE "s"."recipe" DROP COLUMN "rating""#,
            #"ALTER TABLE "s"."recipe" RENAME COLUMN "\#(rating)" TO "rating""#,
            #"ALTER INDEX "s"."\#(temporaryIndex)" RENAME TO "\#(index.name)""#,
        ])
        let swapOfCode = try #require(phases.first { $0.statements.contains { $0.sql.text.contains(#"RENAME COLUMN "\#(code)""#) } })
        #expect(swapOfCode.statements.last?.sql.text == #"ALTER TABLE "s"."recipe" ADD CONSTRAINT "\#(unique.name)" UNIQUE USING INDEX "\#(temporaryUnique)""#)
        #expect(phases.filter { $0.hold != .batch && $0.hold != .scan }.allSatisfy { $0.hold == .instant })
    }

    @Test func aSubEntitysCheckAndScopedUniqueIndexOverAWidenedColumnAreRebuiltNotValidThenValidated() throws {
        let phases = try Self.phases(Self.source, Self.destination)
        let layout = StoreLayout(version: try InferenceFixtures.version(Self.destination, name: "d"), schema: "s")
        let dessert = try #require(layout.table(named: "dessert"))
        let check = try #require(dessert.checks.first { $0.kind.requiredColumn == "layers" })
        let sku = try #require(dessert.uniqueConstraints.first { $0.columns == ["sku"] })
        let layers = "orchestrator_online_new_\(OnlineTrigger.digest("dessert.layers"))"
        let temporaryCheck = CoveringConstraint.check(check).temporaryName(on: "dessert")
        let temporarySku = CoveringConstraint.unique(sku).temporaryName(on: "dessert")
        let skuColumn = "orchestrator_online_new_\(OnlineTrigger.digest("dessert.sku"))"

        let sql = Self.sql(phases)
        #expect(sql.contains(#"ALTER TABLE "s"."dessert" ADD CONSTRAINT "\#(temporaryCheck)" CHECK ("_entity" NOT IN ('Cake') OR "\#(layers)" IS NOT NULL) NOT VALID"#))
        let validation = try #require(phases.first { $0.statements.map(\.sql.text) == [#"ALTER TABLE "s"."dessert" VALIDATE CONSTRAINT "\#(temporaryCheck)""#] })
        #expect(validation.lock == .shareUpdateExclusive && validation.hold == .scan)
        #expect(sql.contains(#"ALTER TABLE "s"."dessert" RENAME CONSTRAINT "\#(temporaryCheck)" TO "\#(check.name)""#))
        #expect(sql.contains(#"CREATE UNIQUE INDEX CONCURRENTLY "\#(temporarySku)" ON "s"."dessert" ("\#(skuColumn)") WHERE "_entity" IN ('Cake')"#))
        #expect(sql.contains(#"ALTER INDEX "s"."\#(temporarySku)" RENAME TO "\#(sku.name)""#))
        #expect(!sql.contains { $0.contains("UNIQUE USING INDEX \"\(temporarySku)\"") }, "a scoped unique index is no constraint")
    }

    @Test func anIndexTheStepAddsOverAWidenedColumnIsBuiltOnceOnTheFinalColumn() throws {
        let phases = try Self.phases(
            "Recipe: {attributes: {rating: int16}}",
            "Recipe: {attributes: {rating: int32}, indexes: {byRating: [rating]}}"
        )
        let builds = phases.filter { $0.execution == .outsideTransaction }
        #expect(builds.count == 1)
        #expect(builds.first?.statements.first?.sql.text.hasSuffix(#"ON "s"."recipe" ("rating")"#) == true)
        let swap = try #require(phases.firstIndex { $0.statements.contains { $0.sql.text.contains("RENAME COLUMN") } })
        #expect(try #require(phases.firstIndex { $0.execution == .outsideTransaction }) > swap)
    }

    static func shadow(_ table: String, _ column: String) -> String { CoveringConstraint.shadow(of: column, on: table) }

    @Test func anIndexAndAUniquenessConstraintOverTwoWidenedColumnsAreBuiltOnceOverBothNewColumnsAndTakeTheirNamesInOneSwap() throws {
        let source = "Recipe: {attributes: {rating: int16, servings: int16, code: int16}, indexes: {byBoth: [rating, servings]}, uniquenessConstraints: [[code, servings]]}"
        let phases = try Self.phases(source, source.replacingOccurrences(of: "int16", with: "int32"))
        let recipe = try #require(StoreLayout(version: try InferenceFixtures.version(source, name: "d"), schema: "s").table(named: "recipe"))
        let index = CoveringConstraint.index(try #require(recipe.indexes.first { $0.columns == ["rating", "servings"] }))
        let unique = try #require(recipe.uniqueConstraints.first { $0.columns == ["code", "servings"] })
        let (rating, servings, code) = (Self.shadow("recipe", "rating"), Self.shadow("recipe", "servings"), Self.shadow("recipe", "code"))
        let (temporaryIndex, temporaryUnique) = (index.temporaryName(on: "recipe"), CoveringConstraint.unique(unique).temporaryName(on: "recipe"))

        let builds = phases.filter { $0.execution == .outsideTransaction }
        #expect(Self.sql(builds) == [
            #"CREATE INDEX CONCURRENTLY "\#(temporaryIndex)" ON "s"."recipe" ("\#(rating)", "\#(servings)")"#,
            #"CREATE UNIQUE INDEX CONCURRENTLY "\#(temporaryUnique)" ON "s"."recipe" ("\#(code)", "\#(servings)")"#,
        ])
        // After every column's batches, before the one swap of all three.
        let lastBatches = try #require(phases.lastIndex { $0.execution == .batches })
        let swaps = phases.indices.filter { phases[$0].statements.contains { $0.sql.text.contains("RENAME COLUMN") } }
        #expect(swaps.count == 1)
        let swap = phases[try #require(swaps.first)]
        #expect(phases.firstIndex { $0.index == temporaryIndex }! > lastBatches && swaps[0] > phases.lastIndex { $0.execution == .outsideTransaction }!)
        #expect(swap.hold == .instant && swap.lock == .accessExclusive)
        #expect(Set(swap.removes.map(\.name)) == Set(["rating", "servings", "code"].map { "orchestrator_online_widen_\(OnlineTrigger.digest("recipe.\($0)"))" }))
        #expect(swap.statements.map(\.sql.text).suffix(2) == [
            #"ALTER INDEX "s"."\#(temporaryIndex)" RENAME TO "\#(index.name)""#,
            #"ALTER TABLE "s"."recipe" ADD CONSTRAINT "\#(unique.name)" UNIQUE USING INDEX "\#(temporaryUnique)""#,
        ])
        #expect(swap.statements.filter { $0.sql.text.contains("DROP COLUMN") }.count == 3)
    }

    /// Posts whose sibling entities share two integer columns (docs/store-format.md).
    static func posts(reader: String, post: String = "") -> String {
        """
        BasePost: {abstract: true, attributes: {title: string}}
        Post: {parent: BasePost, attributes: {likeCount: int32, shareCount: int32}\(post)}
        ReaderPost: {parent: BasePost, attributes: {likeCount: \(reader), shareCount: \(reader)}}
        Note: {parent: BasePost, attributes: {likeCount: string, shareCount: string}}
        """
    }

    @Test func anIndexOverTwoSplitColumnsIsBuiltOverBothNewColumnsAndTakesItsNameAtTheSwitchOver() throws {
        let index = ", indexes: {byCounts: [likeCount, shareCount]}"
        let online = try #require(try LightweightFixtures.step(Self.posts(reader: "int32", post: index), Self.posts(reader: "int64", post: index)).phases)
        #expect(online.refusals == [])
        let (likes, shares) = (Self.shadow("base_post", "like_count_integer"), Self.shadow("base_post", "share_count_integer"))
        let builds = online.phases.filter { $0.execution == .outsideTransaction }
        #expect(builds.count == 1)
        #expect(Self.sql(builds).first?.hasSuffix(#"ON "s"."base_post" ("\#(likes)", "\#(shares)")"#) == true)
        let switchOver = try #require(online.phases.last?.statements.map(\.sql.text))
        let renames = switchOver.filter { $0.contains("RENAME") }
        #expect(renames.count == 3 && renames.last?.hasPrefix(#"ALTER INDEX "s"."orchestrator_online_covering_"#) == true)
        #expect(online.phases.dropLast().allSatisfy { !$0.statements.contains { $0.sql.text.contains("RENAME COLUMN") } })
    }

    @Test func anIndexAndAUniquenessConstraintTheStepAddsOverASplitColumnAreBuiltOnTheNewColumnAndNamedAtTheSwitchOver() throws {
        let online = try #require(try LightweightFixtures.step(
            Self.posts(reader: "int32"), Self.posts(reader: "int64", post: ", indexes: {byLikes: [likeCount]}, uniquenessConstraints: [[shareCount]]")
        ).phases)
        #expect(online.refusals == [])
        let (likes, shares) = (Self.shadow("base_post", "like_count_integer"), Self.shadow("base_post", "share_count_integer"))
        let sql = Self.sql(online.phases.filter { $0.execution == .outsideTransaction })
        #expect(sql.count == 2)
        #expect(sql.contains { $0.hasPrefix(#"CREATE INDEX CONCURRENTLY "orchestrator_online_covering_"#) && $0.hasSuffix(#"("\#(likes)")"#) })
        #expect(sql.contains { $0.hasSuffix(#"("\#(shares)") WHERE "_entity" IN ('Post')"#) })
        let switchOver = try #require(online.phases.last?.statements.map(\.sql.text))
        let renamed = try #require(switchOver.lastIndex { $0.contains("RENAME COLUMN") })
        #expect(switchOver[(renamed + 1)...].filter { $0.hasPrefix(#"ALTER INDEX "s"."orchestrator_online_covering_"#) }.count == 2)
    }

    /// ReaderPost's likeCount column widens and takes Post's values (copied), and its index
    /// covers shareCount, which Post leaves (cleared): the widened column swaps in at the
    /// switch-over with the split one, and its trigger fires after the copy's (by name), so it
    /// converts the value the copy writes.
    @Test func aWidenedColumnSwappedInAtTheSwitchOverTakesTheValuesCopiedIntoIt() throws {
        let posts = { (post: String, postShares: String, reader: String) in """
            BasePost: {abstract: true, attributes: {title: string}}
            Post: {parent: BasePost, attributes: {likeCount: \(post), shareCount: \(postShares)}}
            ReaderPost: {parent: BasePost, attributes: {likeCount: \(reader), shareCount: int32}, indexes: {byCounts: [likeCount, shareCount]}}
            Note: {parent: BasePost, attributes: {likeCount: string, shareCount: string}}
            """ }
        let phases = try Self.phases(posts("int16", "int32", "int32"), posts("int64", "int64", "int64"))
        let triggers = phases.flatMap(\.installs).map(\.name)
        let (copy, widen) = ("orchestrator_online_values_\(OnlineTrigger.digest("base_post.like_count_bigint"))", "orchestrator_online_widen_\(OnlineTrigger.digest("base_post.like_count_bigint"))")
        #expect(triggers.contains(copy) && triggers.contains(widen) && copy < widen)
        #expect(phases.flatMap(\.removes).isEmpty, "every column swaps in at the switch-over")
        let switchOver = try #require(phases.last?.statements.map(\.sql.text))
        #expect(switchOver.contains(#"ALTER TABLE "s"."base_post" RENAME COLUMN "\#(Self.shadow("base_post", "like_count_bigint"))" TO "like_count_bigint""#))
        #expect(switchOver.contains { $0.hasSuffix(#"RENAME TO "base_post_by_counts_idx""#) })
    }

    /// Calories and the chef link move down from Dessert to Cake (values cleared in the other
    /// desserts' rows), where calories become required and indexed.
    @Test func aColumnClearedThenRequiredAndIndexedIsCheckedAndIndexedOnTheNewColumnAndKeepsItsForeignKey() throws {
        let online = try #require(try LightweightFixtures.step(
            """
            Chef: {attributes: {name: string}}
            Dessert: {attributes: {name: string, calories: int32}, relationships: {chef: {destination: Chef}}}
            Cake: {parent: Dessert}
            """,
            """
            Chef: {attributes: {name: string}}
            Dessert: {attributes: {name: string}}
            Cake: {parent: Dessert, attributes: {calories: {type: int32, optional: false, default: 0}}, relationships: {chef: {destination: Chef}}, indexes: {byCalories: [calories]}}
            """
        ).phases)
        #expect(online.refusals == [])
        let (calories, chef) = (Self.shadow("dessert", "calories"), Self.shadow("dessert", "chef_pk"))
        let sql = Self.sql(online.phases)
        #expect(sql.contains { $0.contains(#"CHECK ("_entity" NOT IN ('Cake') OR "\#(calories)" IS NOT NULL) NOT VALID"#) })
        #expect(sql.contains { $0.contains(#"FOREIGN KEY ("\#(chef)") REFERENCES "s"."chef" ("_pk") ON DELETE SET NULL NOT VALID"#) })
        #expect(sql.contains { $0.hasPrefix("CREATE INDEX CONCURRENTLY") && $0.hasSuffix(#"("\#(calories)")"#) })
        let switchOver = try #require(online.phases.last?.statements.map(\.sql.text))
        #expect(switchOver.contains(#"ALTER TABLE "s"."dessert" RENAME CONSTRAINT "\#(CoveringConstraint.foreignKey(ForeignKey(name: "dessert_chef_pk_fkey", column: "chef_pk", referencedTable: "chef", onDelete: "SET NULL")).temporaryName(on: "dessert"))" TO "dessert_chef_pk_fkey""#))
        #expect(!sql.contains { $0.contains(#"ADD CONSTRAINT "dessert_calories_required""#) }, "the check goes on the new column, not the old one")
    }
}
