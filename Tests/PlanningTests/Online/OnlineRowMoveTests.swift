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

    /// After the renames, so that the triggers name the table and column as they stay.
    @Test func linksToRemovedRowsAreClearedThenTheRowsDeletedInBatchesUnderTriggersAfterTheRenames() throws {
        let phases = try OnlinePlannerTests.phases(
            "Dessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: int16}}\nPie: {parent: Dessert, attributes: {crust: string}}\nMenu: {attributes: {title: string}, relationships: {special: {destination: Dessert}}}",
            "Dessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: int16}}\nCarte: {renamingIdentifier: Menu, attributes: {title: string}, relationships: {highlight: {destination: Dessert, renamingIdentifier: special}}}"
        )
        let renamed = try #require(phases.lastIndex { $0.statements.contains { $0.sql.text.contains(#"RENAME COLUMN "special_pk" TO "highlight_pk""#) } })
        let (detach, removed) = ("orchestrator_online_detach_\(OnlineTrigger.digest("carte.highlight_pk"))", "orchestrator_online_removed_\(OnlineTrigger.digest("dessert._entity"))")
        #expect(phases[renamed + 1].installs == [OnlineTrigger(table: "carte", name: detach)])
        #expect(phases[renamed + 1].statements[0].sql.text.contains(#"AND EXISTS (SELECT 1 FROM "s"."dessert" WHERE "_pk" = NEW."highlight_pk" AND "_entity" IN ('Pie')) THEN"#))
        #expect(phases[renamed + 1].statements.last?.sql.text == #"CREATE TRIGGER "\#(detach)" BEFORE INSERT OR UPDATE ON "s"."carte" FOR EACH ROW EXECUTE FUNCTION "s"."\#(detach)"()"#)
        #expect(phases[renamed + 2].batches?.template.text == #"UPDATE "s"."carte" SET "highlight_pk" = NULL WHERE "highlight_pk" IN (SELECT "_pk" FROM "s"."dessert" WHERE "_entity" IN ('Pie')) AND "_pk" >= :from AND "_pk" < :to"#)
        #expect(phases[renamed + 3].installs == [OnlineTrigger(table: "dessert", name: removed)])
        #expect(phases[renamed + 3].statements[0].sql.text.hasSuffix(#"AS $online$BEGIN IF NEW."_entity" IN ('Pie') THEN RETURN NULL; END IF; RETURN NEW; END$online$"#))
        #expect(phases[renamed + 3].statements.last?.sql.text == #"CREATE TRIGGER "\#(removed)" BEFORE INSERT OR UPDATE OF _entity ON "s"."dessert" FOR EACH ROW EXECUTE FUNCTION "s"."\#(removed)"()"#)
        #expect(phases[renamed + 4].batches?.template.text == #"DELETE FROM "s"."dessert" WHERE "_entity" IN ('Pie') AND "_pk" >= :from AND "_pk" < :to"#)
        #expect(Self.sql(phases).filter { $0.hasPrefix("DELETE") || $0.contains("= NULL WHERE") }.count == 2, "each runs once, in batches")
        // The new _entity check comes after the rows left; the switch-over drops both triggers.
        #expect(try #require(phases.firstIndex { $0.summary == "check dessert_entity_check on dessert, for new writes" }) > renamed + 4)
        let switchOver = Set(phases.last?.statements.map(\.sql.text) ?? [])
        #expect(switchOver.isSuperset(of: [
            #"DROP TRIGGER IF EXISTS "\#(detach)" ON "s"."carte""#, #"DROP TRIGGER IF EXISTS "\#(removed)" ON "s"."dessert""#,
        ]))
    }

    /// A link whose column the step removes needs no clearing: the column's drop takes it.
    @Test func aLinkToRemovedRowsInARemovedColumnIsNotClearedOnline() throws {
        let phases = try OnlinePlannerTests.phases(
            "Dessert: {attributes: {name: string}}\nPie: {parent: Dessert}\nMenu: {relationships: {special: {destination: Pie}}}",
            "Dessert: {attributes: {name: string}}\nMenu: {attributes: {title: string}}"
        )
        let sql = Self.sql(phases)
        #expect(!sql.contains { $0.contains("special_pk\" = NULL") })
        #expect(sql.contains(#"ALTER TABLE "s"."menu" DROP COLUMN "special_pk""#))
        #expect(sql.contains(#"DELETE FROM "s"."dessert" WHERE "_entity" IN ('Pie') AND "_pk" >= :from AND "_pk" < :to"#))
    }

    @Test func aOneToOneWhoseColumnChangesSidesIsFilledBesideTheOldColumnUnderAMirroringTrigger() throws {
        let phases = try OnlinePlannerTests.phases(
            "Alpha: {relationships: {partner: {destination: Beta, inverse: alpha}}}\nBeta: {relationships: {alpha: {destination: Alpha, inverse: partner}}}",
            "Zeta: {renamingIdentifier: Alpha, relationships: {partner: {destination: Beta, inverse: alpha}}}\nBeta: {relationships: {alpha: {destination: Zeta, inverse: partner}}}"
        )
        let sql = Self.sql(phases)
        let trigger = "orchestrator_online_side_\(OnlineTrigger.digest("zeta.beta.alpha_pk"))"
        let install = try #require(phases.firstIndex { $0.installs == [OnlineTrigger(table: "zeta", name: trigger)] })
        #expect(try #require(sql.firstIndex(of: #"ALTER TABLE "s"."beta" ADD COLUMN "alpha_pk" bigint"#)) < sql.firstIndex(of: phases[install].statements[0].sql.text)!)
        let function = phases[install].statements[0].sql.text
        #expect(function.contains(#"UPDATE "s"."beta" SET "alpha_pk" = NULL WHERE "_pk" = OLD."partner_pk" AND "alpha_pk" = OLD."_pk";"#))
        #expect(function.contains(#"UPDATE "s"."beta" SET "alpha_pk" = NEW."_pk" WHERE "_pk" = NEW."partner_pk";"#))
        #expect(phases[install].statements.last?.sql.text == #"CREATE TRIGGER "\#(trigger)" AFTER INSERT OR UPDATE OR DELETE ON "s"."zeta" FOR EACH ROW EXECUTE FUNCTION "s"."\#(trigger)"()"#)
        #expect(phases[install + 1].batches?.table == "zeta")
        #expect(phases[install + 1].batches?.template.text == #"""
            UPDATE "s"."beta" AS x SET "alpha_pk" = l."_pk" FROM (SELECT "partner_pk", "_pk" FROM "s"."zeta" WHERE "partner_pk" IS NOT NULL \#
            AND "_pk" >= :from AND "_pk" < :to FOR SHARE) AS l WHERE x."_pk" = l."partner_pk"
            """#)
        #expect(sql.contains(#"ALTER TABLE "s"."beta" ADD CONSTRAINT "beta_alpha_pk_fkey" FOREIGN KEY ("alpha_pk") REFERENCES "s"."zeta" ("_pk") ON DELETE SET NULL NOT VALID"#))
        #expect(sql.filter { $0.contains(#"DROP COLUMN "partner_pk""#) } == [#"ALTER TABLE "s"."zeta" DROP COLUMN "partner_pk""#])
        #expect(phases.last?.statements.map(\.sql.text).suffix(3) == [
            #"DROP TRIGGER IF EXISTS "\#(trigger)" ON "s"."zeta""#, #"DROP FUNCTION IF EXISTS "s"."\#(trigger)"()"#, #"ALTER TABLE "s"."zeta" DROP COLUMN "partner_pk""#,
        ])
    }
}
