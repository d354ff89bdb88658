import Testing
@testable import Planning

/// A CHECK constraint added (the `_entity` check listing a new sub-entity).
/// The change: Planning/Changes/AddCheck.swift.
@Suite struct AddCheckTests: RuleRows {
    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("adding a sub-entity adds its columns and lists it in the _entity check", from: "Animal: {attributes: {name: string}}", to: M.animals, [
            #"ALTER TABLE "s"."animal" DROP CONSTRAINT "animal_entity_check""#,
            #"ALTER TABLE "s"."animal" ALTER COLUMN "_entity" DROP DEFAULT"#,
            #"ALTER TABLE "s"."animal" ADD COLUMN "bark" text"#,
            #"ALTER TABLE "s"."animal" ADD CONSTRAINT "animal_entity_check" CHECK ("_entity" IN ('Animal', 'Dog'))"#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
