import Testing
@testable import Planning

/// A fetch index removed; online, dropped in a phase of its own.
/// The change: Planning/Changes/DropIndex.swift.
@Suite struct DropIndexTests: RuleRows, OnlineStepFixtures {
    /// Rule rows: a model edit and the golden SQL of the step that plans it offline, then the
    /// SQL of the phases `apply --online` plans for it.
    static let rows: [(RuleCase, online: [String])] = [
        (.init("removing a fetch index drops it", from: "Recipe: {attributes: {name: string}, indexes: {byName: [name]}}", to: M.recipe("name: string"), [
            #"DROP INDEX "s"."recipe_by_name_idx""#,
        ]), online: [
            #"DROP INDEX "s"."recipe_by_name_idx""#,
        ]),
    ]

    @Test(arguments: rows.map(\.0))
    func sql(_ row: RuleCase) throws { try Self.expectOfflineSQL(row) }

    @Test(arguments: rows)
    func onlineSQL(_ row: RuleCase, online: [String]) throws { try Self.expectOnlineSQL(row, online) }
}
