import Testing
@testable import Planning

/// What the rule rows of the change suites share: each suite's `rows` are model edits and the
/// golden SQL of the lightweight step that plans them (`RuleCase`), as the rule tables of
/// `LightweightDiff` kept them before they moved beside their change.
protocol RuleRows {}

extension RuleRows {
    typealias M = InlineModels

    static var manyToMany: String {
        """
        Recipe: {relationships: {tags: {destination: Tag, inverse: recipes, toMany: true}}}
        Tag: {relationships: {recipes: {destination: Recipe, inverse: tags, toMany: true}}}
        """
    }
}
