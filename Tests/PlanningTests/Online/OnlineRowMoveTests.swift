import Testing
@testable import Planning

/// The phases `apply --online` runs for an entity moved between tables, rows of removed
/// entities deleted with the links to them, and a one-to-one whose column changes sides.
@Suite struct OnlineRowMoveTests {
    static func sql(_ phases: [OnlinePhase]) -> [String] {
        phases.flatMap { $0.statements.map(\.sql.text) + ($0.batches.map { [$0.template.text] } ?? []) }
    }

    @Test func anEntityMovedOutOfItsHierarchyIsMirroredIntoItsTableAndLeavesTheOldOneAtTheSwitchOver() throws {
        let phases = try OnlinePlannerTests.phases(
            """
            Animal: {attributes: {name: string}}
            Dog: {parent: Animal, attributes: {bark: string}, relationships: {owner: {destination: Owner, inverse: dogs}}}
            Owner: {attributes: {name: string}, relationships: {dogs: {destination: Dog, inverse: owner, toMany: true}, favourite: {destination: Dog}}}
            """,
            """
            Animal: {attributes: {name: string}}
            Dog: {attributes: {name: string, bark: string}, relationships: {owner: {destination: Owner, inverse: dogs}}}
            Owner: {attributes: {name: string}, relationships: {dogs: {destination: Dog, inverse: owner, toMany: true}, favourite: {destination: Dog}}}
            """
        )
        let trigger = "orchestrator_online_move_\(OnlineTrigger.digest("animal.dog"))"
        let install = try #require(phases.firstIndex { !$0.installs.isEmpty })
        #expect(phases[install].installs == [OnlineTrigger(table: "animal", name: trigger)])
        #expect(phases[install].statements.last?.sql.text == #"CREATE TRIGGER "\#(trigger)" AFTER INSERT OR UPDATE OR DELETE ON "s"."animal" FOR EACH ROW EXECUTE FUNCTION "s"."\#(trigger)"()"#)
        let function = phases[install].statements[0].sql.text
        #expect(function.contains(#"DELETE FROM "s"."dog" WHERE "_pk" = OLD."_pk";"#))
        #expect(function.contains(#"INSERT INTO "s"."dog" ("_pk", "name", "bark", "owner_pk", "_entity") VALUES (NEW."_pk", NEW."name", NEW."bark", NEW."owner_pk", CASE NEW."_entity" WHEN 'Dog' THEN 'Dog' END)"#))
        #expect(function.contains(#"ON CONFLICT ("_pk") DO UPDATE SET "name" = EXCLUDED."name", "bark" = EXCLUDED."bark", "owner_pk" = EXCLUDED."owner_pk", "_entity" = EXCLUDED."_entity";"#))
        #expect(phases[install + 1].execution == .batches && phases[install + 1].batches?.table == "animal")
        #expect(phases[install + 1].batches?.template.text == #"""
            INSERT INTO "s"."dog" ("_pk", "name", "bark", "owner_pk", "_entity") SELECT "_pk", "name", "bark", "owner_pk", CASE "_entity" WHEN 'Dog' THEN 'Dog' END \#
            FROM "s"."animal" WHERE "_entity" IN ('Dog') AND "_pk" >= :from AND "_pk" < :to FOR SHARE ON CONFLICT DO NOTHING
            """#)
        // The key pointing at dogs is built beside the old one, which acts until the switch-over.
        let beside = "orchestrator_online_fk_\(OnlineTrigger.digest("owner.favourite_pk"))"
        let all = Self.sql(Array(phases.dropLast()))
        #expect(all.contains(#"ALTER TABLE "s"."owner" ADD CONSTRAINT "\#(beside)" FOREIGN KEY ("favourite_pk") REFERENCES "s"."dog" ("_pk") ON DELETE SET NULL NOT VALID"#))
        #expect(all.contains(#"ALTER TABLE "s"."owner" VALIDATE CONSTRAINT "\#(beside)""#))
        #expect(!all.contains { $0.contains("owner_favourite_pk_fkey") || $0.contains("animal_entity_check CHECK") || $0.hasPrefix("DELETE") })
        #expect(phases.last?.statements.map(\.sql.text) == [
            #"DROP TRIGGER IF EXISTS "\#(trigger)" ON "s"."animal""#,
            #"DROP FUNCTION IF EXISTS "s"."\#(trigger)"()"#,
            #"ALTER TABLE "s"."owner" DROP CONSTRAINT "owner_favourite_pk_fkey""#,
            #"ALTER TABLE "s"."owner" RENAME CONSTRAINT "\#(beside)" TO "owner_favourite_pk_fkey""#,
            #"SELECT setval(pg_get_serial_sequence('"s"."dog"', '_pk'), COALESCE((SELECT max("_pk") FROM "s"."dog"), 0) + 1, false)"#,
            #"DELETE FROM "s"."animal" WHERE "_entity" IN ('Dog')"#,
            #"ALTER TABLE "s"."animal" DROP COLUMN "bark""#,
            #"ALTER TABLE "s"."animal" DROP COLUMN "owner_pk""#,
            #"ALTER TABLE "s"."animal" ADD CONSTRAINT "animal_entity_check" CHECK ("_entity" IN ('Animal'))"#,
        ])
    }
}
