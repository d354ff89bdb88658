import Testing
@testable import Planning

/// A fetch index added, or the index of a new foreign-key column; online, built concurrently.
/// The change: Planning/Changes/CreateIndex.swift.
@Suite struct CreateIndexTests: RuleRows, OnlineStepFixtures {
    /// Rule rows: a model edit and the golden SQL of the step that plans it offline, then the
    /// SQL of the phases `apply --online` plans for it.
    static let rows: [(RuleCase, online: [String])] = [
        (.init("adding a fetch index creates it", from: M.recipe("name: string"), to: "Recipe: {attributes: {name: string}, indexes: {byName: [name]}}", [
            #"CREATE INDEX "recipe_by_name_idx" ON "s"."recipe" ("name")"#,
        ]), online: [
            #"CREATE INDEX CONCURRENTLY "recipe_by_name_idx" ON "s"."recipe" ("name")"#,
        ]),
    ]

    @Test(arguments: rows.map(\.0))
    func sql(_ row: RuleCase) throws { try Self.expectOfflineSQL(row) }

    @Test(arguments: rows)
    func onlineSQL(_ row: RuleCase, online: [String]) throws { try Self.expectOnlineSQL(row, online) }
}
