import Testing
@testable import Planning

/// Entities renamed under `apply --online`: the rows' `_entity` rewritten under a trigger.
/// The change: Planning/Changes/UpdateEntityNames.swift.
@Suite struct UpdateEntityNamesTests: OnlineStepFixtures, RuleRows {
    @Test func theEntityRenamesTriggerFiresBeforeTheBackfillThatReadsTheNewNames() throws {
        let phases = try Self.phases(
            "Dessert: {attributes: {name: string}}\nCake: {parent: Dessert, attributes: {layers: int16}}",
            "Dessert: {attributes: {name: string}}\nGateau: {parent: Dessert, renamingIdentifier: Cake, attributes: {layers: {type: int16, optional: false, default: 1}}}"
        )
        let triggers = phases.flatMap(\.installs).map(\.name)
        #expect(triggers.count == 2)
        let rename = try #require(triggers.first { $0.contains("_entity_") })
        let backfill = try #require(triggers.first { $0.contains("_backfill_") })
        #expect(rename < backfill, "PostgreSQL fires BEFORE triggers in name order; the backfill reads 'Gateau'")
        #expect(phases.flatMap(\.statements).contains { $0.sql.text.contains(#"NEW."_entity" IN ('Gateau')"#) })
    }

    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("renaming a sub-entity updates _entity and the checks naming it",
              from: "Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {bark: {type: string, optional: false}}}",
              to: "Animal: {attributes: {name: string}}\nHound: {parent: Animal, renamingIdentifier: Dog, attributes: {bark: {type: string, optional: false}}}", [
            #"ALTER TABLE "s"."animal" DROP CONSTRAINT "animal_entity_check""#,
            #"ALTER TABLE "s"."animal" DROP CONSTRAINT "animal_bark_required""#,
            #"UPDATE "s"."animal" SET "_entity" = CASE "_entity" WHEN 'Dog' THEN 'Hound' END WHERE "_entity" IN ('Dog')"#,
            #"ALTER TABLE "s"."animal" ADD CONSTRAINT "animal_entity_check" CHECK ("_entity" IN ('Animal', 'Hound'))"#,
            #"ALTER TABLE "s"."animal" ADD CONSTRAINT "animal_bark_required" CHECK ("_entity" NOT IN ('Hound') OR "bark" IS NOT NULL)"#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
