import Mapping
import ObjectModel
import Testing

@Suite struct ExpressionCheckerTests {
    typealias F = ExpressionFixtures

    struct Accepted: Sendable, CustomTestStringConvertible {
        var text: String
        var attribute: String
        var type: ValueType
        var needsSwift = false
        var mapping = F.recipeToRecipe
        var testDescription: String { "\(attribute) = \(text)" }
    }

    static let accepted: [Accepted] = [
        Accepted(text: "$source.amount", attribute: "totalCost", type: .integer32),
        Accepted(text: "($source.temperature - 32.0) / 1.8", attribute: "temperatureC", type: .double),
        Accepted(text: "$source.#size", attribute: "totalCost", type: .integer32),
        Accepted(text: "$source.amount * 2", attribute: "count", type: .integer64),
        Accepted(text: "$source.servings", attribute: "totalCost", type: .integer64),
        Accepted(text: "$source.rating", attribute: "small", type: .integer16),
        Accepted(text: "$source.amount", attribute: "temperatureC", type: .integer32),
        Accepted(text: "$source.amount", attribute: "price", type: .integer32),
        Accepted(text: "$source.price * 1.1", attribute: "price", type: .decimal),
        Accepted(text: "$source.price - $source.amount", attribute: "price", type: .decimal),
        Accepted(text: "$source.price / 4", attribute: "price", type: .double),
        Accepted(text: "$source.price + $source.temperature", attribute: "temperatureC", type: .double),
        Accepted(text: "$source.weight", attribute: "weight", type: .float),
        Accepted(text: "$source.weight * 2", attribute: "weight", type: .double),
        Accepted(text: "$source.temperature", attribute: "weight", type: .double),
        Accepted(text: "-$source.weight", attribute: "weight", type: .float),
        Accepted(text: "-$source.rating", attribute: "small", type: .integer64),
        Accepted(text: "$source.chef.name", attribute: "title", type: .string),
        Accepted(text: "$source.chef.restaurant.city", attribute: "title", type: .string),
        Accepted(text: "uppercase:($source.name)", attribute: "name", type: .string),
        Accepted(text: "trim:(lowercase:($source.chef.name))", attribute: "title", type: .string),
        Accepted(text: "length:($source.name)", attribute: "totalCost", type: .integer32),
        Accepted(text: "abs:($source.amount)", attribute: "totalCost", type: .integer32),
        Accepted(text: "now()", attribute: "created", type: .date),
        Accepted(text: "$source.created", attribute: "created", type: .date),
        Accepted(text: "nil", attribute: "title", type: .null),
        Accepted(text: #""privacy""#, attribute: "title", type: .string),
        Accepted(text: "$source.name", attribute: "link", type: .string),
        Accepted(text: "$source.link", attribute: "title", type: .string),
        Accepted(text: "YES", attribute: "isVegan", type: .boolean),
        Accepted(text: "$source.photo", attribute: "photo", type: .binary),
        Accepted(text: "$source.uid", attribute: "uid", type: .uuid),
        Accepted(text: "1", attribute: "temperatureC", type: .integer64),
        Accepted(text: "32767", attribute: "small", type: .integer64),
        Accepted(text: #""untitled""#, attribute: "name", type: .string, mapping: F.newRecipe),
        Accepted(
            text: #"FUNCTION($entityPolicy, "titleFor:", $source.name)"#, attribute: "title", type: .unknown, needsSwift: true,
            mapping: F.recipeWithPolicy
        ),
        Accepted(
            text: #"FUNCTION($entityPolicy, "migrateIconURL")"#, attribute: "link", type: .unknown, needsSwift: true,
            mapping: F.recipeWithPolicy
        ),
        Accepted(
            text: #"FUNCTION($entityPolicy, "merge:into:", $source, $destination)"#, attribute: "title", type: .unknown,
            needsSwift: true, mapping: F.recipeWithPolicy
        ),
        Accepted(text: #"FUNCTION($source, "displayName")"#, attribute: "title", type: .unknown, needsSwift: true),
        Accepted(text: #"FUNCTION($manager, "currentEntityMapping")"#, attribute: "title", type: .unknown, needsSwift: true),
    ]

    @Test("expressions that fit both models check, with their type", arguments: accepted)
    func accepts(_ c: Accepted) throws {
        let checked = try F.checked(c.text, into: c.attribute, mapping: c.mapping)
        #expect(checked.type == c.type)
        #expect(checked.needsSwift == c.needsSwift)
        #expect(checked.destination.name == c.attribute)
    }

    @Test func theAttributesReadAreListedOnceWithTheirKeysAndJoins() throws {
        let checked = try F.checked(
            "$source.amount + $source.chef.rank * $source.amount - length:($source.chef.restaurant.city)", into: "count"
        )
        #expect(checked.attributes.map(\.key) == ["amount", "chef.rank", "chef.restaurant.city"])
        #expect(checked.attributes.map(\.columnName) == ["amount", "rank", "city"])
        #expect(checked.joins.map(\.path) == [["chef"], ["chef", "restaurant"]])
        #expect(checked.joins.map(\.entity) == ["Recipe", "Chef"])
        #expect(checked.joins.map(\.relationship.destination) == ["Chef", "Restaurant"])
    }

    struct Rejected: Sendable, CustomTestStringConvertible {
        var text: String
        var attribute: String
        var keyPath: String?
        var message: String
        var hint: String? = nil
        var mapping = F.recipeToRecipe
        var testDescription: String { "\(attribute) = \(text)" }
    }

    static let rejected: [Rejected] = [
        Rejected(
            text: "$source.temprature", attribute: "temperatureC", keyPath: "$source.temprature",
            message: "Recipe has no property 'temprature' in version Recipes 2", hint: "did you mean 'temperature'?"
        ),
        Rejected(
            text: "$source.Amount", attribute: "totalCost", keyPath: "$source.Amount",
            message: "Recipe has no property 'Amount' in version Recipes 2", hint: "did you mean 'amount'?"
        ),
        Rejected(
            text: "$source.chef.restaurant.zip", attribute: "title", keyPath: "$source.chef.restaurant.zip",
            message: "Restaurant has no property 'zip' in version Recipes 2"
        ),
        Rejected(
            text: "$source.ingredients.name", attribute: "title", keyPath: "$source.ingredients.name",
            message: "'ingredients' is a to-many relationship of Recipe: key paths go through to-one relationships only",
            hint: #"a to-many relationship can only be the sourceInstances of FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", …) in a relationship mapping"#
        ),
        Rejected(
            text: "$source.name.initial", attribute: "title", keyPath: "$source.name.initial",
            message: "'name' is an attribute of Recipe: a key path cannot go past it"
        ),
        Rejected(
            text: "$source.chef", attribute: "title", keyPath: "$source.chef",
            message: "'chef' is a relationship of Recipe, not an attribute",
            hint: "name an attribute of Chef ($source.chef.<attribute>), or map it in relationships"
        ),
        Rejected(
            text: "$source.cachedTitle", attribute: "title", keyPath: "$source.cachedTitle",
            message: "'cachedTitle' of Recipe is transient: it has no stored value"
        ),
        Rejected(
            text: "$source.name", attribute: "totalCost", keyPath: "$source.name",
            message: "a String value cannot be stored in Integer 32 attribute 'totalCost'"
        ),
        Rejected(
            text: "$source.temperature", attribute: "totalCost", keyPath: "$source.temperature",
            message: "a Double value cannot be stored in Integer 32 attribute 'totalCost': the fraction would be lost"
        ),
        Rejected(
            text: "$source.amount / 2", attribute: "count", keyPath: nil,
            message: "a Double value cannot be stored in Integer 64 attribute 'count': the fraction would be lost"
        ),
        Rejected(
            text: "$source.price", attribute: "count", keyPath: "$source.price",
            message: "a Decimal value cannot be stored in Integer 64 attribute 'count': the fraction would be lost"
        ),
        Rejected(
            text: "$source.isVegan", attribute: "small", keyPath: "$source.isVegan",
            message: "a Boolean value cannot be stored in Integer 16 attribute 'small'"
        ),
        Rejected(
            text: "$source.amount", attribute: "title", keyPath: "$source.amount",
            message: "an Integer 32 value cannot be stored in String attribute 'title'"
        ),
        Rejected(
            text: "$source.uid", attribute: "title", keyPath: "$source.uid",
            message: "a UUID value cannot be stored in String attribute 'title'"
        ),
        Rejected(
            text: "$source.name + 1", attribute: "title", keyPath: "$source.name",
            message: "'+' needs numbers, but $source.name is String"
        ),
        Rejected(
            text: "-$source.created", attribute: "created", keyPath: "$source.created",
            message: "'-' needs numbers, but $source.created is Date"
        ),
        Rejected(
            text: "uppercase:($source.amount)", attribute: "title", keyPath: "$source.amount",
            message: "uppercase: needs a String, but $source.amount is Integer 32"
        ),
        Rejected(
            text: "abs:($source.name)", attribute: "title", keyPath: "$source.name",
            message: "abs: needs numbers, but $source.name is String"
        ),
        Rejected(text: "nil", attribute: "name", keyPath: nil, message: "nil cannot be stored in non-optional attribute 'name'"),
        Rejected(text: "70000", attribute: "small", keyPath: nil, message: "70000 is out of range for Integer 16 attribute 'small'"),
        Rejected(
            text: "$source", attribute: "title", keyPath: nil, message: "$source is the source object, not a value",
            hint: "name one of its attributes: $source.<attribute>"
        ),
        Rejected(
            text: "$manager", attribute: "title", keyPath: nil, message: "$manager has no value of its own",
            hint: "$manager can only be the target or an argument of FUNCTION"
        ),
        Rejected(
            text: "$destination.name", attribute: "title", keyPath: "$destination.name", message: "only $source key paths can be read",
            hint: #"pass $destination to a policy function: FUNCTION($entityPolicy, "selector:", $destination)"#
        ),
        Rejected(
            text: #"FUNCTION($entityPolicy, "titleFor:", $source.name)"#, attribute: "title", keyPath: nil,
            message: "FUNCTION($entityPolicy, …) needs a custom policy, and entity mapping RecipeToRecipe names none",
            hint: "name the policy in the entity mapping (policy: <Name>)"
        ),
        Rejected(
            text: #"FUNCTION($entityPolicy, "titleFor:", $source.nam)"#, attribute: "title", keyPath: "$source.nam",
            message: "Recipe has no property 'nam' in version Recipes 2", hint: "did you mean 'name'?", mapping: F.recipeWithPolicy
        ),
        Rejected(
            text: #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "ChefToChef", $source.chef)"#,
            attribute: "title", keyPath: nil, message: "destinationInstancesForEntityMappingNamed:sourceInstances: gives objects, not a value",
            hint: "use it in a relationship mapping; an attribute takes a value such as $source.<attribute>"
        ),
        Rejected(
            text: #"FUNCTION("abc", "uppercaseString")"#, attribute: "title", keyPath: nil,
            message: #"the target of FUNCTION must be a variable, not "abc""#,
            hint: #"call a policy function: FUNCTION($entityPolicy, "selector:", …)"#
        ),
        Rejected(
            text: #"FUNCTION($entityPolicy, "cost") + 1"#, attribute: "count", keyPath: nil,
            message: "'+' needs numbers, and a policy function's result is known only when it runs",
            hint: "do the arithmetic inside the function", mapping: F.recipeWithPolicy
        ),
        Rejected(text: "{1, 2}", attribute: "count", keyPath: nil, message: "a list {…} can only be the right side of IN"),
        Rejected(text: "$source.name", attribute: "scratch", keyPath: nil, message: "attribute 'scratch' is transient: it has no column to fill"),
        Rejected(
            text: "$source.name", attribute: "name", keyPath: "$source.name",
            message: "entity mapping NewRecipe has no source entity, so $source is nil", mapping: F.newRecipe
        ),
    ]

    @Test("expressions that do not fit are refused, naming the key path at fault", arguments: rejected)
    func rejects(_ c: Rejected) throws {
        let error = try #require(try F.checkError(c.text, into: c.attribute, mapping: c.mapping))
        #expect(error.entityMapping == c.mapping.name)
        #expect(error.property == c.attribute)
        #expect(error.keyPath == c.keyPath)
        #expect(error.message == c.message)
        #expect(error.hint == c.hint)
    }

    @Test func aCheckErrorNamesTheEntityMappingThePropertyAndThePath() throws {
        let error = try #require(try F.checkError("($source.temprature - 32.0) / 1.8", into: "temperatureC"))
        #expect(error.description == """
            entity mapping RecipeToRecipe, property temperatureC: $source.temprature: Recipe has no property 'temprature' in version Recipes 2
              in: ($source.temprature - 32.0) / 1.8
              hint: did you mean 'temperature'?
            """)
    }

    @Test func aSourceEntityMissingFromTheSourceVersionIsNamed() throws {
        let mapping = EntityMappingDefinition(name: "GhostToRecipe", type: .transform, sourceEntity: "Ghost", destinationEntity: "Recipe")
        let error = try #require(try F.checkError("$source.name", into: "name", mapping: mapping))
        #expect(error.message == "source entity Ghost is not in version Recipes 2")
    }
}
