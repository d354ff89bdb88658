import Testing
@testable import Planning

/// Rows that leave a table under `apply --online`: moved rows leave through the table rebuilt
/// beside itself (`ShadowTable`) or in the switch-over; rows of removed entities are deleted in
/// batches under triggers, after the renames.
/// The change: Planning/Changes/DeleteRows.swift.
@Suite struct DeleteRowsTests: OnlineStepFixtures {
    /// Two entities leave one table, and the table is renamed: one shadow, named after the
    /// table's new name, holds the rows of neither; the switch-over drops and renames under
    /// the new name.
    @Test func twoEntitiesLeavingARenamedTableShareOneShadow() throws {
        let phases = try Self.phases(
            "Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {bark: string}}\nCat: {parent: Animal, attributes: {lives: int16}}",
            "Creature: {renamingIdentifier: Animal, attributes: {name: string}}\nDog: {attributes: {name: string, bark: string}}\nCat: {attributes: {name: string, lives: int16}}"
        )
        let shadow = "orchestrator_online_shadow_\(OnlineTrigger.digest("creature"))"
        let creates = phases.filter { $0.statements.contains { $0.sql.text.hasPrefix(#"CREATE TABLE "s"."orchestrator_online_shadow_"#) } }
        #expect(creates.count == 1 && creates.first?.statements.first?.sql.text.contains(#"CHECK ("_entity" IN ('Creature'))"#) == true)
        let copy = try #require(phases.first { $0.batches?.template.text.hasPrefix(#"INSERT INTO "s"."\#(shadow)""#) == true })
        #expect(copy.batches?.template.text.contains(#"FROM "s"."creature" WHERE "_entity" NOT IN ('Dog', 'Cat')"#) == true, "\(copy.batches?.template.text ?? "")")
        let switchOver = phases.last?.statements.map(\.sql.text) ?? []
        #expect(switchOver.suffix(4) == [
            #"DROP TABLE "s"."creature""#,
            #"ALTER TABLE "s"."\#(shadow)" RENAME TO "creature""#,
            #"ALTER INDEX "s"."\#(shadow)_pkey" RENAME TO "creature_pkey""#,
            #"ALTER SEQUENCE "s"."\#(shadow)__pk_seq" RENAME TO "creature__pk_seq""#,
        ])
        #expect(!Self.sql(phases).contains { $0.hasPrefix("DELETE") })
    }

    /// A foreign key of the destination points at the table the rows leave (a toy's animal,
    /// cleared when its animal goes): the links to dogs are cleared before the switch-over, a
    /// key pointing at the shadow is built beside the old one, and the switch-over swaps both
    /// by renames; no row is deleted or checked under its locks.
    @Test func aTableOthersPointAtIsRebuiltBesideItselfWithTheirKeysMovedToItsShadow() throws {
        let toy = "\nToy: {attributes: {label: string}, relationships: {animal: {destination: Animal}}}"
        let phases = try Self.phases(Self.dogLeavesAnimals.0 + toy, Self.dogLeavesAnimals.1 + toy)
        let shadow = "orchestrator_online_shadow_\(OnlineTrigger.digest("animal"))"
        let (detach, beside) = ("orchestrator_online_unlink_\(OnlineTrigger.digest("toy.animal_pk"))", "orchestrator_online_shadowfk_\(OnlineTrigger.digest("toy.animal_pk"))")
        let copy = try #require(phases.firstIndex { $0.batches?.template.text.hasPrefix(#"INSERT INTO "s"."\#(shadow)""#) == true })
        #expect(phases[copy + 1].installs == [OnlineTrigger(table: "toy", name: detach)])
        #expect(phases[copy + 1].statements[0].sql.text.contains(#"AND EXISTS (SELECT 1 FROM "s"."animal" WHERE "_pk" = NEW."animal_pk" AND "_entity" IN ('Dog')) THEN"#))
        #expect(phases[copy + 2].batches?.template.text == #"UPDATE "s"."toy" SET "animal_pk" = NULL WHERE "animal_pk" IN (SELECT "_pk" FROM "s"."animal" WHERE "_entity" IN ('Dog')) AND "_pk" >= :from AND "_pk" < :to"#)
        #expect(phases[copy + 3].statements.map(\.sql.text) == [
            #"ALTER TABLE "s"."toy" ADD CONSTRAINT "\#(beside)" FOREIGN KEY ("animal_pk") REFERENCES "s"."\#(shadow)" ("_pk") ON DELETE SET NULL NOT VALID"#,
        ])
        #expect(phases[copy + 3].hold == .instant && phases[copy + 4].hold == .scan)
        #expect(phases[copy + 4].statements.map(\.sql.text) == [#"ALTER TABLE "s"."toy" VALIDATE CONSTRAINT "\#(beside)""#])
        #expect(phases.count == copy + 6)
        let switchOver = try #require(phases.last)
        #expect(switchOver.hold == .instant)
        let statements = switchOver.statements.map(\.sql.text)
        #expect(statements.contains(#"DROP TRIGGER IF EXISTS "\#(detach)" ON "s"."toy""#))
        #expect(!statements.contains { $0.hasPrefix("DELETE") || $0.contains("CHECK") || $0.contains("DROP COLUMN") })
        let drop = try #require(statements.firstIndex(of: #"DROP TABLE "s"."animal""#))
        #expect(Array(statements[(drop - 3)..<drop]) == [
            #"ALTER TABLE "s"."toy" DROP CONSTRAINT "toy_animal_pk_fkey""#,
            #"ALTER TABLE "s"."toy" RENAME CONSTRAINT "\#(beside)" TO "toy_animal_pk_fkey""#,
            #"SELECT setval(pg_get_serial_sequence('"s"."\#(shadow)"', '_pk'), nextval(pg_get_serial_sequence('"s"."animal"', '_pk')), false)"#,
        ])
    }

    /// A toy must have an animal: the rows linking to dogs are counted at the step's start,
    /// which names them and stops the step as offline, and again in the switch-over, before
    /// the dogs' delete (no shadow: a required link written meanwhile must stop the step).
    @Test func aRequiredLinkStopsTheStepAtItsStartAndAgainInTheSwitchOverNamingTheRows() throws {
        let (source, destination) = Self.toysOfAnimals(rule: "deny", toyAnimal: ", optional: false")
        let phases = try Self.phases(source, destination)
        let problem = "rows of toy whose required animal_pk links to rows of Dog (moved out of animal)"
        let check = try #require(phases.first { $0.summary == "check: no " + problem })
        #expect(check.hold == .scan && check.lock == .accessShare)
        #expect(check.statements[0].sql.text.contains(#"SELECT "_pk" FROM "s"."toy" WHERE true AND "animal_pk" IN (SELECT "_pk" FROM "s"."animal" WHERE "_entity" IN ('Dog'))"#))
        #expect(check.statements[0].sql.text.contains("ERRCODE = 'check_violation'"))
        #expect(!Self.sql(Array(phases.dropLast())).contains { $0.contains("SET \"animal_pk\" = NULL") || $0.hasPrefix("DELETE") })
        let switchOver = try #require(phases.last).statements.map(\.sql.text)
        let delete = try #require(switchOver.firstIndex(of: #"DELETE FROM "s"."animal" WHERE "_entity" IN ('Dog')"#))
        #expect(switchOver[delete - 1].contains(#"SELECT "_pk" FROM "s"."toy" WHERE "animal_pk" IN (SELECT "_pk" FROM "s"."animal" WHERE "_entity" IN ('Dog'))"#))
        #expect(switchOver[delete - 1].hasPrefix("DO"))
    }

    /// The table's own key (an animal's mother): the animals that stay lose their links to
    /// dogs before the switch-over (a trigger and batches on the old table, mirrored into the
    /// shadow); the shadow's key points at the shadow, added once it holds every animal, under
    /// its final name; the switch-over only drops and renames.
    @Test(arguments: ["nullify", "cascade", "deny"])
    func theTablesOwnKeyClearsTheLinksOfTheRowsThatStayAndPointsAtTheShadow(rule: String) throws {
        let animal = "Animal: {attributes: {name: string}, relationships: {mother: {destination: Animal, inverse: young}, young: {destination: Animal, inverse: mother, toMany: true, deleteRule: \(rule)}}}"
        let source = Self.dogLeavesAnimals.0.replacingOccurrences(of: "Animal: {attributes: {name: string}}", with: animal)
        let destination = Self.dogLeavesAnimals.1.replacingOccurrences(of: "Animal: {attributes: {name: string}}", with: animal)
        let phases = try Self.phases(source, destination)
        let shadow = "orchestrator_online_shadow_\(OnlineTrigger.digest("animal"))"
        let create = try #require(phases.first { $0.summary.hasPrefix("create \(shadow)") }).statements.map(\.sql.text)
        #expect(!create.contains { $0.contains("FOREIGN KEY") }, "the shadow is created without the key pointing at the old table")
        let unlink = "orchestrator_online_unlink_\(OnlineTrigger.digest("animal.mother_pk"))"
        let copy = try #require(phases.firstIndex { $0.batches?.template.text.hasPrefix(#"INSERT INTO "s"."\#(shadow)""#) == true })
        if rule == "nullify" {
            #expect(phases[copy + 1].installs == [OnlineTrigger(table: "animal", name: unlink)])
            #expect(phases[copy + 1].statements[0].sql.text.contains(#"AND EXISTS (SELECT 1 FROM "s"."animal" WHERE "_pk" = NEW."mother_pk" AND "_entity" IN ('Dog')) AND NEW."_entity" NOT IN ('Dog') THEN"#))
            #expect(phases[copy + 2].batches?.template.text == #"""
                UPDATE "s"."animal" SET "mother_pk" = NULL WHERE "mother_pk" IN (SELECT "_pk" FROM "s"."animal" WHERE "_entity" IN ('Dog')) \#
                AND "_entity" NOT IN ('Dog') AND "_pk" >= :from AND "_pk" < :to
                """#)
        } else {
            // The links cleared are logged, so the key's rule keeps acting on them (ClearedLinks).
            #expect(phases[copy + 1].installs.map(\.name).first == unlink && phases[copy + 1].installs.count == 3)
            #expect(phases[copy + 1].statements[2].sql.text.contains(#"IF NEW."mother_pk" IS NOT NULL AND (TG_OP = 'INSERT' OR NEW."mother_pk" IS DISTINCT FROM OLD."mother_pk") AND NEW."_entity" NOT IN ('Dog') THEN"#))
            #expect(phases[copy + 2].batches?.template.text.hasPrefix(#"""
                WITH cleared AS (SELECT "_pk", "mother_pk" FROM "s"."animal" AS t WHERE "mother_pk" IN (SELECT "_pk" FROM "s"."animal" WHERE "_entity" IN ('Dog')) \#
                AND "_entity" NOT IN ('Dog') AND "_pk" >= :from AND "_pk" < :to FOR UPDATE OF t)
                """#) == true)
        }
        let action = ["nullify": "SET NULL", "cascade": "CASCADE", "deny": "RESTRICT"][rule]!
        #expect(phases[copy + 3].statements.map(\.sql.text) == [
            #"ALTER TABLE "s"."\#(shadow)" ADD CONSTRAINT "animal_mother_pk_fkey" FOREIGN KEY ("mother_pk") REFERENCES "s"."\#(shadow)" ("_pk") ON DELETE \#(action) NOT VALID"#,
        ])
        #expect(phases[copy + 4].statements.map(\.sql.text) == [#"ALTER TABLE "s"."\#(shadow)" VALIDATE CONSTRAINT "animal_mother_pk_fkey""#])
        #expect(phases.count == copy + 6)
        let switchOver = try #require(phases.last).statements.map(\.sql.text)
        #expect(!switchOver.contains { $0.hasPrefix("DELETE") || $0.hasPrefix("DO") || $0.contains("animal_mother_pk_fkey") }, "\(switchOver)")
        #expect(switchOver.contains(#"DROP TABLE "s"."animal""#))
    }

    /// A join table's key (a toy's animals, without inverse; or Animal's own toys, which Dog
    /// no longer has): the links to dogs are deleted before the switch-over, as the offline
    /// delete of the dogs cascades to them, by a trigger skipping a link written to a dog and
    /// batches over ranges of the animals' keys; the key beside points at the shadow.
    @Test(arguments: [
        ("Animal: {attributes: {name: string}}", "Toy: {attributes: {label: string}, relationships: {animals: {destination: Animal, toMany: true}}}", "toy__animals", "animals_pk", "toy_pk"),
        ("Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}", "Toy: {attributes: {label: string}}", "animal__toys", "animal_pk", "toys_pk"),
    ])
    func aJoinTablesLinksToMovedRowsAreDeletedBeforeTheSwitchOver(animal: String, toy: String, join: String, column: String, owner: String) throws {
        let (source, destination) = Self.toysOfAnimals(animal: animal, toy: toy)
        let phases = try Self.phases(source, destination)
        let shadow = "orchestrator_online_shadow_\(OnlineTrigger.digest("animal"))"
        let (unlink, beside) = ("orchestrator_online_unlink_\(OnlineTrigger.digest(join + "." + column))", "orchestrator_online_shadowfk_\(OnlineTrigger.digest(join + "." + column))")
        let copy = try #require(phases.firstIndex { $0.batches?.template.text.hasPrefix(#"INSERT INTO "s"."\#(shadow)""#) == true })
        #expect(phases[copy + 1].installs == [OnlineTrigger(table: join, name: unlink)])
        let function = phases[copy + 1].statements[0].sql.text
        #expect(function.contains(#"AND EXISTS (SELECT 1 FROM "s"."animal" WHERE "_pk" = NEW."\#(column)" AND "_entity" IN ('Dog')) THEN"#))
        let (first, second) = join == "toy__animals" ? (owner, column) : (column, owner)
        #expect(function.contains(#"DELETE FROM "s"."\#(join)" WHERE "\#(first)" = OLD."\#(first)" AND "\#(second)" = OLD."\#(second)";"#), "\(function)")
        #expect(phases[copy + 2].batches?.table == "animal")
        #expect(phases[copy + 2].batches?.template.text == #"""
            DELETE FROM "s"."\#(join)" WHERE "\#(column)" IN (SELECT "_pk" FROM "s"."animal" WHERE "_entity" IN ('Dog')) AND "\#(column)" >= :from AND "\#(column)" < :to
            """#)
        #expect(phases[copy + 3].statements.map(\.sql.text) == [
            #"ALTER TABLE "s"."\#(join)" ADD CONSTRAINT "\#(beside)" FOREIGN KEY ("\#(column)") REFERENCES "s"."\#(shadow)" ("_pk") ON DELETE CASCADE NOT VALID"#,
        ])
        #expect(phases.count == copy + 6)
        let switchOver = try #require(phases.last).statements.map(\.sql.text)
        #expect(!switchOver.contains { $0.hasPrefix("DELETE") || $0.hasPrefix("DO") })
        let drop = try #require(switchOver.firstIndex(of: #"DROP TABLE "s"."animal""#))
        #expect(Array(switchOver[(drop - 3)..<(drop - 1)]) == [
            #"ALTER TABLE "s"."\#(join)" DROP CONSTRAINT "\#(join)_\#(column)_fkey""#,
            #"ALTER TABLE "s"."\#(join)" RENAME CONSTRAINT "\#(beside)" TO "\#(join)_\#(column)_fkey""#,
        ])
    }

    /// A required link (a toy must keep its animal), or a join table whose links a copy of
    /// the step reads (Dog keeps the toys it inherited: its links are copied out of Animal's
    /// join table, which a trigger skipping them would hide): no shadow, so the moved rows are
    /// deleted and the `_entity` check added in the switch-over (docs/online-migrations.md, Limits).
    @Test(arguments: [
        Self.toysOfAnimals(rule: "deny", toyAnimal: ", optional: false"),
        (
            "Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}\nDog: {parent: Animal}\nToy: {attributes: {label: string}}",
            "Animal: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}\nDog: {attributes: {name: string}, relationships: {toys: {destination: Toy, toMany: true}}}\nToy: {attributes: {label: string}}"
        ),
    ])
    func aTableWhoseKeysTheShadowCannotTakeOverLosesItsMovedRowsInTheSwitchOver(source: String, destination: String) throws {
        let phases = try Self.phases(source, destination)
        #expect(!Self.sql(phases).contains { $0.contains("orchestrator_online_shadow_") })
        #expect(phases.last?.statements.map(\.sql.text).contains(#"DELETE FROM "s"."animal" WHERE "_entity" IN ('Dog')"#) == true)
    }

    /// After the renames, so that the triggers name the table and column as they stay.
    @Test func linksToRemovedRowsAreClearedThenTheRowsDeletedInBatchesUnderTriggersAfterTheRenames() throws {
        let phases = try Self.phases(
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
        #expect(phases[renamed + 4].batches?.template.text == #"SET LOCAL orchestrator.online_step = 'on'; DELETE FROM "s"."dessert" WHERE "_entity" IN ('Pie') AND "_pk" >= :from AND "_pk" < :to"#)
        #expect(Self.sql(phases).filter { $0.contains("DELETE FROM \"s\".\"dessert\"") || $0.contains("= NULL WHERE") }.count == 2, "each runs once, in batches")
        // The new _entity check comes after the rows left; the switch-over drops both triggers.
        #expect(try #require(phases.firstIndex { $0.summary == "check dessert_entity_check on dessert, for new writes" }) > renamed + 4)
        let switchOver = Set(phases.last?.statements.map(\.sql.text) ?? [])
        #expect(switchOver.isSuperset(of: [
            #"DROP TRIGGER IF EXISTS "\#(detach)" ON "s"."carte""#, #"DROP TRIGGER IF EXISTS "\#(removed)" ON "s"."dessert""#,
        ]))
    }
}
