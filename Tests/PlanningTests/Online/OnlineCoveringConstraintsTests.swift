import Testing
@testable import Planning

/// A widened column covered by indexes and constraints: `apply --online` builds them on the new
/// column while writes go on, and they take their names in the swap.
@Suite struct OnlineCoveringConstraintsTests {
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
        let phases = try OnlinePlannerTests.phases(Self.source, Self.destination)
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
        let phases = try OnlinePlannerTests.phases(Self.source, Self.destination)
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
        let phases = try OnlinePlannerTests.phases(
            "Recipe: {attributes: {rating: int16}}",
            "Recipe: {attributes: {rating: int32}, indexes: {byRating: [rating]}}"
        )
        let builds = phases.filter { $0.execution == .outsideTransaction }
        #expect(builds.count == 1)
        #expect(builds.first?.statements.first?.sql.text.hasSuffix(#"ON "s"."recipe" ("rating")"#) == true)
        let swap = try #require(phases.firstIndex { $0.statements.contains { $0.sql.text.contains("RENAME COLUMN") } })
        #expect(try #require(phases.firstIndex { $0.execution == .outsideTransaction }) > swap)
    }

    @Test func anIndexOverTwoWidenedColumnsHasNoOnlineFormAndSaysSo() throws {
        let online = try #require(try LightweightFixtures.step(
            "Recipe: {attributes: {rating: int16, servings: int16}, indexes: {byBoth: [rating, servings]}}",
            "Recipe: {attributes: {rating: int32, servings: int32}, indexes: {byBoth: [rating, servings]}}"
        ).online)
        #expect(!online.isSupported)
        #expect(online.refusals.count == 2)
        #expect(online.refusals.first?.hasPrefix("change recipe.rating from smallint to integer: ") == true)
        #expect(online.refusals.first?.hasSuffix("also covers another column the step rebuilds, which has no online rebuild yet (docs/online-migrations.md, Limits)") == true)
    }
}
