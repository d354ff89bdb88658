import Foundation
import Mapping
import ObjectModel

/// Two versions of a recipes model and a mapping model between them, for expression tests.
enum ExpressionFixtures {
    static let source = ModelVersion(name: "Recipes 2", entities: [
        Entity(
            name: "Recipe",
            attributes: [
                Attribute(name: "name", type: .string, isOptional: false),
                Attribute(name: "notes", type: .string),
                Attribute(name: "amount", type: .integer32),
                Attribute(name: "rating", type: .integer16),
                Attribute(name: "servings", type: .integer64),
                Attribute(name: "temperature", type: .double),
                Attribute(name: "weight", type: .float),
                Attribute(name: "price", type: .decimal),
                Attribute(name: "size", type: .integer32),
                Attribute(name: "isVegan", type: .boolean),
                Attribute(name: "created", type: .date),
                Attribute(name: "photo", type: .binaryData),
                Attribute(name: "uid", type: .uuid),
                Attribute(name: "link", type: .uri),
                Attribute(name: "cachedTitle", type: .string, isTransient: true),
            ],
            relationships: [
                Relationship(name: "chef", destination: "Chef", inverse: "recipes"),
                Relationship(name: "ingredients", destination: "Ingredient", inverse: "recipe", isToMany: true),
            ]
        ),
        Entity(
            name: "Chef",
            attributes: [
                Attribute(name: "name", type: .string),
                Attribute(name: "rank", type: .integer16),
            ],
            relationships: [
                Relationship(name: "recipes", destination: "Recipe", inverse: "chef", isToMany: true),
                Relationship(name: "restaurant", destination: "Restaurant"),
            ]
        ),
        Entity(name: "Restaurant", attributes: [Attribute(name: "city", type: .string)]),
        Entity(
            name: "Ingredient",
            attributes: [Attribute(name: "name", type: .string)],
            relationships: [Relationship(name: "recipe", destination: "Recipe", inverse: "ingredients")]
        ),
    ])

    static let destination = ModelVersion(name: "Recipes 3", entities: [
        Entity(
            name: "Recipe",
            attributes: [
                Attribute(name: "name", type: .string, isOptional: false),
                Attribute(name: "title", type: .string),
                Attribute(name: "link", type: .uri),
                Attribute(name: "totalCost", type: .integer32),
                Attribute(name: "small", type: .integer16),
                Attribute(name: "count", type: .integer64),
                Attribute(name: "temperatureC", type: .double),
                Attribute(name: "weight", type: .float),
                Attribute(name: "price", type: .decimal),
                Attribute(name: "isVegan", type: .boolean),
                Attribute(name: "created", type: .date),
                Attribute(name: "photo", type: .binaryData),
                Attribute(name: "uid", type: .uuid),
                Attribute(name: "scratch", type: .string, isTransient: true),
            ],
            relationships: [
                Relationship(name: "author", destination: "Person", inverse: "recipes"),
                Relationship(name: "chef", destination: "Chef"),
                Relationship(name: "parts", destination: "Ingredient", isToMany: true),
            ]
        ),
        Entity(
            name: "Person",
            attributes: [Attribute(name: "name", type: .string)],
            relationships: [Relationship(name: "recipes", destination: "Recipe", inverse: "author", isToMany: true)]
        ),
        Entity(name: "Chef", attributes: [Attribute(name: "name", type: .string)]),
        Entity(name: "Ingredient", attributes: [Attribute(name: "name", type: .string)]),
    ])

    static let recipeToRecipe = EntityMappingDefinition(
        name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe"
    )
    static let recipeWithPolicy = EntityMappingDefinition(
        name: "RecipeWithPolicy", type: .custom, sourceEntity: "Recipe", destinationEntity: "Recipe", policy: "RecipePolicy"
    )
    static let newRecipe = EntityMappingDefinition(name: "NewRecipe", type: .add, sourceEntity: nil, destinationEntity: "Recipe")
    static let entityMappings = [
        recipeToRecipe,
        recipeWithPolicy,
        newRecipe,
        EntityMappingDefinition(name: "ChefToPerson", type: .transform, sourceEntity: "Chef", destinationEntity: "Person"),
        EntityMappingDefinition(name: "ChefToChef", type: .copy, sourceEntity: "Chef", destinationEntity: "Chef"),
        EntityMappingDefinition(name: "IngredientToIngredient", type: .copy, sourceEntity: "Ingredient", destinationEntity: "Ingredient"),
    ]

    static func checker(_ mapping: EntityMappingDefinition = recipeToRecipe) -> ExpressionChecker {
        ExpressionChecker(entityMapping: mapping, entityMappings: entityMappings, source: source, destination: destination)
    }

    static func destinationAttribute(_ name: String) -> Attribute {
        guard let attribute = destination.entity(named: "Recipe")?.attribute(named: name) else {
            preconditionFailure("no destination attribute \(name)")
        }
        return attribute
    }

    static func destinationRelationship(_ name: String) -> Relationship {
        guard let relationship = destination.entity(named: "Recipe")?.relationship(named: name) else {
            preconditionFailure("no destination relationship \(name)")
        }
        return relationship
    }

    /// Parses and checks a value expression for a destination attribute of Recipe.
    static func checked(
        _ text: String, into attribute: String, mapping: EntityMappingDefinition = recipeToRecipe
    ) throws -> CheckedExpression {
        try checker(mapping).check(ExpressionParser.parseExpression(text), destinationAttribute: destinationAttribute(attribute))
    }

    /// Parses and checks a filter on Recipe.
    static func filter(_ text: String) throws -> CheckedPredicate {
        try checker().checkFilter(ExpressionParser.parsePredicate(text))
    }

    /// The check error for a value expression, or nil when it checks.
    static func checkError(_ text: String, into attribute: String, mapping: EntityMappingDefinition = recipeToRecipe) throws -> ExpressionCheckError? {
        let expression = try ExpressionParser.parseExpression(text)
        do {
            _ = try checker(mapping).check(expression, destinationAttribute: destinationAttribute(attribute))
            return nil
        } catch {
            return error
        }
    }

    static let compiler = SQLExpressionCompiler(sourceAlias: "s")

    static func date(_ iso: String) -> Date {
        ISO8601DateFormatter().date(from: iso)!
    }
}
