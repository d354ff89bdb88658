import Testing
import Mapping
import ObjectModel
@testable import Planning

/// Stage 3 of an online heavyweight step split around the write guard (`OnlineStageThree`):
/// the build proves every row; under the guard, only the rows the touched-row log names are
/// read.
@Suite struct OnlineStageThreePlanningTests {
    typealias Kitchen = HeavyweightMigrationTests

    /// The kitchen step, with Recipe.author required and at most three recipes per chef.
    static func stageThree() throws -> OnlineStageThree {
        let destination = Kitchen.destination.replacingOccurrences(of: "inverse: author, toMany: true}", with: "inverse: author, toMany: true, maxCount: 3}")
        let step = try HeavyweightMigration.step(
            mapping: Kitchen.mapping, from: Kitchen.version("Kitchen 1", Kitchen.source), to: Kitchen.version("Kitchen 2", destination), schema: "shop"
        )
        return try #require(step.staged?.stageThree)
    }

    @Test func theBuildSetsTheRequiredLinksAndCountsEveryRowWhileWritesGoOn() throws {
        let build = try Self.stageThree().build.map(\.sql.text)
        #expect(build.contains(#"ALTER TABLE "shop~staging"."recipe" ALTER COLUMN "author_pk" SET NOT NULL"#))
        let counts = build.filter { $0.contains("rows of Chef whose recipes does not hold 0 to 3 objects") }
        #expect(counts.count == 1)
        #expect(counts.allSatisfy { !$0.contains("_touched_rows") }, "the build counts every chef")
        #expect(build.contains("""
            CREATE FUNCTION "shop~staging"."_unlinked_recipe"() RETURNS trigger LANGUAGE plpgsql AS $body$
            BEGIN
                IF NEW."author_pk" IS NULL THEN NEW."author_pk" := -NEW."_pk"; END IF;
                RETURN NEW;
            END
            $body$
            """))
        #expect(build.contains(#"ALTER TABLE "shop~staging"."recipe" ENABLE ALWAYS TRIGGER "_orchestrator_unlinked""#))
        // The touched-row trigger logs the keys the recipe links to, under the chef table's name.
        #expect(build.contains(#"""
            CREATE TRIGGER "_orchestrator_touched" AFTER INSERT OR UPDATE OR DELETE ON "shop~staging"."recipe" FOR EACH ROW EXECUTE FUNCTION "shop~staging"."_record_touched_row"('author_pk', 'chef')
            """#))
    }

    @Test func underTheGuardEveryCheckReadsOnlyTheLoggedRows() throws {
        let guarded = try Self.stageThree().guarded.map(\.sql.text)
        #expect(!guarded.contains { $0.contains("SET NOT NULL") || $0.contains("ADD CONSTRAINT") })
        let checks = guarded.filter { $0.hasPrefix("DO ") }
        #expect(checks.count == 3, "the required link, the foreign key, the count")
        #expect(checks.allSatisfy { $0.contains(#"FROM "shop~staging"."_touched_rows""#) })
        #expect(checks.contains { $0.contains(#""x"."author_pk" < 0"#) && $0.contains("not_null_violation") })
        #expect(guarded.contains(#"DROP FUNCTION "shop~staging"."_unlinked_recipe"() CASCADE"#))
    }
}
