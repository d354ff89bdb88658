import Testing
@testable import Planning

/// Links to rows that leave or are removed, cleared under `apply --online` before the rows go.
/// The change: Planning/Changes/DetachReferences.swift.
@Suite struct DetachReferencesTests: OnlineStepFixtures {
    /// The toys linking to dogs stay, their links cleared just before the dogs leave `animal`,
    /// whatever the key's delete rule (a migration runs no delete rule): no row is deleted,
    /// so `plan` names none; the links lost are named, by the mapping (the inverse that Dog
    /// no longer has) or, without an inverse, by the step.
    @Test(arguments: ["nullify", "cascade", "deny"])
    func linksToMovedRowsAreClearedBeforeTheyLeaveAndPlanNamesTheLinksNotRows(rule: String) throws {
        let (source, destination) = Self.toysOfAnimals(rule: rule)
        let step = try LightweightFixtures.step(source, destination)
        #expect(step.hazards.filter(\.isDataLoss).map(\.message) == ["Dog.toys removed: its links are dropped"])
        #expect(!step.hazards.contains { $0.message.contains("are deleted with it") || $0.message.hasPrefix("Toy.animal") })
        let sql = step.statements.map(\.sql.text)
        let clear = try #require(sql.firstIndex(of: #"UPDATE "s"."toy" SET "animal_pk" = NULL WHERE "animal_pk" IN (SELECT "_pk" FROM "s"."animal" WHERE "_entity" IN ('Dog'))"#))
        #expect(sql[clear + 1] == #"DELETE FROM "s"."animal" WHERE "_entity" IN ('Dog')"#)
        let toy = "Toy: {attributes: {label: string}, relationships: {animal: {destination: Animal}}}"
        let alone = Self.toysOfAnimals(animal: "Animal: {attributes: {name: string}}", toy: toy)
        #expect(try LightweightFixtures.step(alone.0, alone.1).hazards.filter(\.isDataLoss).map(\.message) == [
            "Toy.animal: its links to rows of Dog are cleared (Dog moved out of animal, so the link cannot stay)",
        ])
    }

    /// A key whose delete rule cascades or denies takes the path of one that clears: the
    /// links to dogs are cleared before the switch-over by a trigger and batches, the key
    /// beside points at the shadow with the same rule, and the switch-over swaps the keys by
    /// renames; no row is deleted or checked under its locks.
    @Test(arguments: [("cascade", "CASCADE"), ("deny", "RESTRICT")])
    func aCascadingOrDenyingKeyPointingAtTheTableClearsTheLinksToMovedRowsBeforeTheSwitchOver(rule: String, action: String) throws {
        let (source, destination) = Self.toysOfAnimals(rule: rule)
        let phases = try Self.phases(source, destination)
        let shadow = "orchestrator_online_shadow_\(OnlineTrigger.digest("animal"))"
        let (unlink, beside) = ("orchestrator_online_unlink_\(OnlineTrigger.digest("toy.animal_pk"))", "orchestrator_online_shadowfk_\(OnlineTrigger.digest("toy.animal_pk"))")
        let copy = try #require(phases.firstIndex { $0.batches?.template.text.hasPrefix(#"INSERT INTO "s"."\#(shadow)""#) == true })
        // The links cleared are logged, so the key's rule keeps acting on them (ClearedLinks).
        let digest = OnlineTrigger.digest("toy.animal_pk")
        #expect(phases[copy + 1].installs == [
            OnlineTrigger(table: "toy", name: unlink), OnlineTrigger(table: "toy", name: "orchestrator_online_changed_\(digest)"),
            OnlineTrigger(table: "animal", name: "orchestrator_online_replay_\(digest)", log: "orchestrator_online_cleared_\(digest)"),
        ])
        let function = phases[copy + 1].statements[2].sql.text
        #expect(function.contains(#"WHERE "_pk" = NEW."animal_pk" AND "_entity" IN ('Dog') FOR KEY SHARE;"#) && function.contains(#"PERFORM 1 FROM "s"."animal""#))
        #expect(function.contains(#"NEW."animal_pk" := NULL;"#) && !function.contains("DELETE"))
        #expect(phases[copy + 2].batches?.template.text.hasPrefix(#"WITH cleared AS (SELECT "_pk", "animal_pk" FROM "s"."toy" AS t WHERE "animal_pk" IN (SELECT "_pk" FROM "s"."animal" WHERE "_entity" IN ('Dog')) AND "_pk" >= :from AND "_pk" < :to FOR UPDATE OF t)"#) == true)
        #expect(phases[copy + 3].statements.map(\.sql.text) == [
            #"ALTER TABLE "s"."toy" ADD CONSTRAINT "\#(beside)" FOREIGN KEY ("animal_pk") REFERENCES "s"."\#(shadow)" ("_pk") ON DELETE \#(action) NOT VALID"#,
        ])
        #expect(phases[copy + 4].statements.map(\.sql.text) == [#"ALTER TABLE "s"."toy" VALIDATE CONSTRAINT "\#(beside)""#])
        #expect(phases.count == copy + 6)
        #expect(!Self.sql(phases).contains { $0.hasPrefix("DELETE") }, "no row is deleted, before or in the switch-over")
        let statements = try #require(phases.last).statements.map(\.sql.text)
        #expect(statements.contains(#"DROP TRIGGER IF EXISTS "\#(unlink)" ON "s"."toy""#))
        #expect(!statements.contains { $0.contains("CHECK") || $0.hasPrefix("DO") })
        let drop = try #require(statements.firstIndex(of: #"DROP TABLE "s"."animal""#))
        #expect(Array(statements[(drop - 3)..<(drop - 1)]) == [
            #"ALTER TABLE "s"."toy" DROP CONSTRAINT "toy_animal_pk_fkey""#,
            #"ALTER TABLE "s"."toy" RENAME CONSTRAINT "\#(beside)" TO "toy_animal_pk_fkey""#,
        ])
    }

    /// A link whose column the step removes needs no clearing: the column's drop takes it.
    @Test func aLinkToRemovedRowsInARemovedColumnIsNotClearedOnline() throws {
        let phases = try Self.phases(
            "Dessert: {attributes: {name: string}}\nPie: {parent: Dessert}\nMenu: {relationships: {special: {destination: Pie}}}",
            "Dessert: {attributes: {name: string}}\nMenu: {attributes: {title: string}}"
        )
        let sql = Self.sql(phases)
        #expect(!sql.contains { $0.contains("special_pk\" = NULL") })
        #expect(sql.contains(#"ALTER TABLE "s"."menu" DROP COLUMN "special_pk""#))
        #expect(sql.contains(#"SET LOCAL orchestrator.online_step = 'on'; DELETE FROM "s"."dessert" WHERE "_entity" IN ('Pie') AND "_pk" >= :from AND "_pk" < :to"#))
    }
}
