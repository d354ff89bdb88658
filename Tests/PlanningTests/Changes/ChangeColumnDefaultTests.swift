import Testing
@testable import Planning

/// A column's default changed.
/// The change: Planning/Changes/ChangeColumnDefault.swift.
@Suite struct ChangeColumnDefaultTests: RuleRows {
    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("changing a default changes the column default only", from: M.recipe("rating: {type: int16, default: 0}"), to: M.recipe("rating: {type: int16, default: 1}"), [
            #"ALTER TABLE "s"."recipe" ALTER COLUMN "rating" SET DEFAULT 1"#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
