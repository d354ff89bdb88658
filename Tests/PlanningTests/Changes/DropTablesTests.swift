import Testing
@testable import Planning

/// Tables dropped: an entity's, or a many-to-many's join table.
/// The change: Planning/Changes/DropTables.swift.
@Suite struct DropTablesTests: RuleRows {
    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("removing an entity drops its table", from: M.recipe + "\nCuisine: {attributes: {name: string}}", to: M.recipe, [
            #"DROP TABLE "s"."cuisine""#,
        ]),
        .init("removing a many-to-many drops its join table", from: manyToMany, to: "Recipe: {}\nTag: {}", [
            #"DROP TABLE "s"."recipe__tags""#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
