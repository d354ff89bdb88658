import Testing
@testable import Planning

/// A column added (an attribute, or a to-one's column).
/// The change: Planning/Changes/AddColumn.swift.
@Suite struct AddColumnTests: RuleRows {
    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("adding an optional attribute adds a nullable column", from: M.recipe, to: M.recipe("name: string, notes: string"), [
            #"ALTER TABLE "s"."recipe" ADD COLUMN "notes" text"#,
        ]),
        .init("adding a non-optional attribute with a default adds it NOT NULL with the default at once", from: M.recipe,
              to: M.recipe("name: string, rating: {type: int16, optional: false, default: 0}"), [
            #"ALTER TABLE "s"."recipe" ADD COLUMN "rating" smallint NOT NULL DEFAULT 0"#,
        ]),
        .init("adding an optional attribute with a default gives existing rows the default", from: M.recipe,
              to: M.recipe("name: string, servings: {type: int32, default: 2}"), [
            #"ALTER TABLE "s"."recipe" ADD COLUMN "servings" integer DEFAULT 2"#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
