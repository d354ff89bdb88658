import Testing
@testable import Planning

/// A hierarchy edit that plans no change at all. The rule rows that plan one sit beside that
/// change, in Tests/PlanningTests/Changes/<Change>Tests.swift.
@Suite struct HierarchyRuleTests {
    typealias M = InlineModels

    static let rows: [RuleCase] = [
        .init("moving a property up a hierarchy keeps its column",
              from: "Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {legs: int16}}\nCat: {parent: Animal, attributes: {legs: int16}}",
              to: "Animal: {attributes: {name: string, legs: int16}}\nDog: {parent: Animal}\nCat: {parent: Animal}", [
        ]),
    ]

    @Test(arguments: rows)
    func sql(_ row: RuleCase) throws {
        #expect(try LightweightFixtures.sql(row.source, row.destination) == row.expected)
    }
}
