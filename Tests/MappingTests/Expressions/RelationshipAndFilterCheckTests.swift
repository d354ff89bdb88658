import Mapping
import ObjectModel
import Testing

@Suite struct RelationshipCheckTests {
    typealias F = ExpressionFixtures

    static func destinationInstances(_ mapping: String, _ keyPath: String) -> String {
        #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", ""# + mapping + #"", "# + keyPath + ")"
    }

    static func check(
        _ text: String, into relationship: String, mapping: EntityMappingDefinition = F.recipeToRecipe
    ) throws -> RelationshipExpression {
        try F.checker(mapping).checkRelationship(
            ExpressionParser.parseExpression(text), destinationRelationship: F.destinationRelationship(relationship)
        )
    }

    @Test("the destinationInstances FUNCTION is a relationship expression", arguments: [
        (destinationInstances("ChefToPerson", "$source.chef"), "author", "ChefToPerson", ["chef"]),
        (destinationInstances("ChefToChef", "$source.chef"), "chef", "ChefToChef", ["chef"]),
        (destinationInstances("IngredientToIngredient", "$source.ingredients"), "parts", "IngredientToIngredient", ["ingredients"]),
    ])
    func destinationInstancesAccepted(_ text: String, _ relationship: String, _ mappingName: String, _ path: [String]) throws {
        let expression = try Self.check(text, into: relationship)
        #expect(expression == .destinationInstances(mappingName: mappingName, sourceKeyPath: path))
        #expect(!expression.needsSwift)
    }

    @Test func aPolicyFunctionGivingTheObjectsNeedsSwift() throws {
        let expression = try Self.check(#"FUNCTION($entityPolicy, "authorFor:", $source)"#, into: "author", mapping: F.recipeWithPolicy)
        #expect(expression == .function(target: .entityPolicy, selector: "authorFor:", arguments: [.variable(.source)]))
        #expect(expression.needsSwift)
    }

    @Test("relationship expressions that do not fit are refused", arguments: [
        ("$source.chef", "author", "a relationship mapping needs destination objects",
         #"write FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToPerson", $source.chef)"#),
        (destinationInstances("ChefToCook", "$source.chef"), "author", "no entity mapping named 'ChefToCook' in this mapping model",
         "entity mappings: RecipeToRecipe, RecipeWithPolicy, NewRecipe, ChefToPerson, ChefToChef, IngredientToIngredient"),
        (destinationInstances("ChefToChef", "$source.chef"), "author", "entity mapping ChefToChef makes Chef, but relationship 'author' holds Person", nil),
        (destinationInstances("IngredientToIngredient", "$source.chef"), "parts",
         "entity mapping IngredientToIngredient reads Ingredient, but $source.chef leads to Chef", nil),
        (destinationInstances("IngredientToIngredient", "$source.ingredients"), "chef",
         "'ingredients' is a to-many relationship, but 'chef' is to-one", nil),
        (destinationInstances("ChefToPerson", "$source.name"), "author", "'name' is an attribute of Recipe, not a relationship", nil),
        (destinationInstances("ChefToPerson", "$source.cook"), "author", "Recipe has no property 'cook' in version Recipes 2", nil),
        (destinationInstances("ChefToPerson", "$source.chef.recipes.chef"), "author",
         "'recipes' is a to-many relationship of Chef: key paths go through to-one relationships only",
         #"a to-many relationship can only be the sourceInstances of FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", …) in a relationship mapping"#),
        (#"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", $source.name, $source.chef)"#, "author",
         "the entity mapping name in destinationInstancesForEntityMappingNamed:sourceInstances: must be a string constant, not $source.name", nil),
        (#"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToPerson", $destination)"#, "author",
         "the source instances in destinationInstancesForEntityMappingNamed:sourceInstances: must be a $source key path to a relationship, not $destination", nil),
        (#"FUNCTION($entityPolicy, "authorFor:", $source)"#, "author",
         "FUNCTION($entityPolicy, …) needs a custom policy, and entity mapping RecipeToRecipe names none", "name the policy in the entity mapping (policy: <Name>)"),
    ] as [(String, String, String, String?)])
    func rejected(_ text: String, _ relationship: String, _ message: String, _ hint: String?) throws {
        let error = try #require(throws: ExpressionCheckError.self) { try Self.check(text, into: relationship) }
        #expect(error.property == relationship)
        #expect(error.message == message)
        #expect(error.hint == hint)
    }
}

@Suite struct FilterCheckTests {
    typealias F = ExpressionFixtures

    @Test("filters over the source entity check", arguments: [
        "amount > 100", "$source.amount > 100", "chef.name == 'Ann'", "notes == nil", "nil != notes", "name BEGINSWITH[c] 'a'",
        "amount IN {1, 2}", "price > 1.5", "isVegan == YES", "created > now()", "uid == uid", "chef.restaurant.city ==[c] 'x'",
        "length:(name) > 3 AND NOT (amount < 0 OR weight >= 2.5)", "TRUEPREDICATE",
    ])
    func accepted(_ text: String) throws {
        let checked = try F.filter(text)
        #expect(checked.predicate == (try ExpressionParser.parsePredicate(text)))
    }

    @Test func aFilterListsTheAttributesAndJoinsItReads() throws {
        let checked = try F.filter("chef.restaurant.city == 'Oslo' AND amount > 1 AND chef.name != nil")
        #expect(checked.attributes.map(\.key) == ["chef.restaurant.city", "amount", "chef.name"])
        #expect(checked.joins.map(\.path) == [["chef"], ["chef", "restaurant"]])
    }

    @Test("filters that do not fit are refused", arguments: [
        ("name > 3", "$source.name", "'>' cannot compare String with Integer 64", nil),
        ("amount > nil", nil, "'>' cannot compare with nil", "use == nil or != nil"),
        ("amount ==[c] 1", "$source.amount", "==[c] compares strings, but $source.amount is Integer 32", nil),
        ("name ==[c] 1", nil, "==[c] compares strings, but 1 is Integer 64", nil),
        ("amount BEGINSWITH 'a'", "$source.amount", "BEGINSWITH needs a String on the left, but $source.amount is Integer 32", nil),
        ("name CONTAINS notes", nil, "the right side of CONTAINS must be a string constant, not $source.notes", nil),
        ("amount IN 3", nil, "the right side of IN must be a list such as {1, 2}", "to compare with one value, use =="),
        ("amount IN {}", nil, "IN {} is always false: give at least one item", nil),
        ("amount IN {1, nil}", nil, "nil in an IN list is not supported", "use == nil"),
        ("amount IN {1, 'a'}", "$source.amount", "'IN' cannot compare Integer 32 with String", nil),
        ("isVegan > NO", "$source.isVegan", "'>' cannot compare Boolean with Boolean", nil),
        ("uid < uid", "$source.uid", "'<' cannot compare UUID with UUID", nil),
        (#"FUNCTION($entityPolicy, "x") == 1"#, nil, "a filter cannot call policy functions: it runs in the database",
         "filter in the policy's createDestinationInstances instead"),
        ("ingredients.name == 'salt'", "$source.ingredients.name",
         "'ingredients' is a to-many relationship of Recipe: key paths go through to-one relationships only",
         #"a to-many relationship can only be the sourceInstances of FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", …) in a relationship mapping"#),
        ("$destination.name == 'x'", "$destination.name", "only $source key paths can be read",
         #"pass $destination to a policy function: FUNCTION($entityPolicy, "selector:", $destination)"#),
    ] as [(String, String?, String, String?)])
    func rejected(_ text: String, _ keyPath: String?, _ message: String, _ hint: String?) throws {
        let error = try #require(throws: ExpressionCheckError.self) { try F.filter(text) }
        #expect(error.property == nil)
        #expect(error.keyPath == keyPath)
        #expect(error.message == message)
        #expect(error.hint == hint)
    }

    @Test func aFilterErrorSaysItIsTheFilter() throws {
        let error = try #require(throws: ExpressionCheckError.self) { try F.filter("name > 3") }
        #expect(error.description == """
            entity mapping RecipeToRecipe, filter: $source.name: '>' cannot compare String with Integer 64
              in: $source.name > 3
            """)
    }
}
