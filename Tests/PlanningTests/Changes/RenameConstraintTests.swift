import Testing
@testable import Planning

/// A constraint or index renamed after the columns it covers.
/// The change: Planning/Changes/RenameConstraint.swift.
@Suite struct RenameConstraintTests: RuleRows {
    /// Rule rows: a model edit and the golden SQL of the step that plans it.
    static let rows: [RuleCase] = [
        .init("renaming an attribute renames the indexes and uniqueness constraints over it",
              from: "Recipe: {attributes: {name: string, code: string}, uniquenessConstraints: [[code]], indexes: {byName: [name]}}",
              to: "Recipe: {attributes: {title: {type: string, renamingIdentifier: name}, reference: {type: string, renamingIdentifier: code}}, uniquenessConstraints: [[reference]], indexes: {byName: [title]}}", [
            #"ALTER TABLE "s"."recipe" RENAME COLUMN "name" TO "title""#,
            #"ALTER TABLE "s"."recipe" RENAME COLUMN "code" TO "reference""#,
            #"ALTER TABLE "s"."recipe" RENAME CONSTRAINT "recipe_code_key" TO "recipe_reference_key""#,
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
