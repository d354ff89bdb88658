import Testing
@testable import Planning

/// A uniqueness constraint removed: the constraint of a root entity, the partial index of a
/// sub-entity; the same statement online (an instant change).
/// The change: Planning/Changes/DropUnique.swift.
@Suite struct DropUniqueTests: RuleRows, OnlineStepFixtures {
    /// Rule rows: a model edit and the golden SQL of the step that plans it offline, then the
    /// SQL of the phases `apply --online` plans for it.
    static let rows: [(RuleCase, online: [String])] = [
        (.init("removing a root entity's uniqueness constraint drops it", from: "Recipe: {attributes: {name: string, code: string}, uniquenessConstraints: [[code]]}", to: M.recipe("name: string, code: string"), [
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "recipe_code_key""#,
        ]), online: [
            #"ALTER TABLE "s"."recipe" DROP CONSTRAINT "recipe_code_key""#,
        ]),
        (.init("removing a sub-entity's uniqueness constraint drops its partial index", from: "Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {bark: string}, uniquenessConstraints: [[bark]]}", to: "Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {bark: string}}", [
            #"DROP INDEX "s"."animal_bark_key""#,
        ]), online: [
            #"DROP INDEX "s"."animal_bark_key""#,
        ]),
    ]

    @Test(arguments: rows.map(\.0))
    func sql(_ row: RuleCase) throws { try Self.expectOfflineSQL(row) }

    @Test(arguments: rows)
    func onlineSQL(_ row: RuleCase, online: [String]) throws { try Self.expectOnlineSQL(row, online) }
}
