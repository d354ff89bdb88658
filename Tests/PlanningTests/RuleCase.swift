import Testing

/// One row of a table-driven rule test: two inline versions (entity lines, flow style) and what
/// the rule must produce — a mapping summary, refusal culprits, or the step's SQL.
struct RuleCase: Sendable, CustomTestStringConvertible {
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

/// Inline versions shared by the inference and lightweight rule tables.
enum InlineModels {
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
