import Testing
@testable import Planning

/// Entities renamed under `apply --online`: the rows' `_entity` rewritten under a trigger.
/// The change: Planning/Changes/UpdateEntityNames.swift.
@Suite struct UpdateEntityNamesTests: OnlineStepFixtures {
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
}
