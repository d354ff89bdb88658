/// One row of a table-driven lightweight test: two inline versions and the step's SQL.
struct LightweightCase: Sendable, CustomTestStringConvertible {
    var behaviour: String
    var source: String
    var destination: String
    var expected: [String]

    init(_ behaviour: String, from source: String, to destination: String, _ expected: [String]) {
        self.behaviour = behaviour
        self.source = source
        self.destination = destination
        self.expected = expected
    }

    var testDescription: String { behaviour }
}

import Testing

/// Inline versions shared by the rule tables.
enum LightweightModels {
    static let recipe = "Recipe: {attributes: {name: string}}"
    static let chefAndRecipes = """
        Recipe: {relationships: {chef: {destination: Chef, inverse: recipes}}}
        Chef: {relationships: {recipes: {destination: Recipe, inverse: chef, toMany: true}}}
        """
    static let animals = """
        Animal: {attributes: {name: string}}
        Dog: {parent: Animal, attributes: {bark: string}}
        """

    static func recipe(_ attributes: String) -> String { "Recipe: {attributes: {\(attributes)}}" }

    static func recipeAndChef(recipe: String, chef: String) -> String {
        "Recipe: {relationships: {chef: {\(recipe)}}}\nChef: {relationships: {recipes: {\(chef)}}}"
    }
}
