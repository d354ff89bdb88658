/// The rules of lightweight inference, one row each (DESIGN.md, "Lightweight inference").
enum InferenceCases {
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

    static let accepted: [InferenceCase] = [
        // Entities.
        .init("adding an entity", from: recipe, to: recipe + "\nCuisine: {attributes: {name: {type: string, optional: false}}}", ["add entity Cuisine"]),
        .init("removing an entity", from: recipe + "\nCuisine: {attributes: {name: string}}", to: recipe, ["remove entity Cuisine"]),
        .init("renaming an entity by renaming identifier", from: recipe, to: "Dish: {renamingIdentifier: Recipe, attributes: {name: string}}", ["rename entity Recipe -> Dish"]),

        // Attributes.
        .init("adding an optional attribute", from: recipe, to: recipe("name: string, notes: string"), ["Recipe.notes added"]),
        .init("adding a non-optional attribute with a default", from: recipe, to: recipe("name: string, rating: {type: int16, optional: false, default: 0}"), ["Recipe.rating added"]),
        .init("removing an attribute", from: recipe("name: string, notes: string"), to: recipe, ["Recipe.notes removed"]),
        .init("renaming an attribute by renaming identifier", from: recipe, to: recipe("title: {type: string, renamingIdentifier: name}"), ["Recipe.title renamed from name"]),
        .init("making an attribute optional", from: recipe("name: {type: string, optional: false}"), to: recipe, ["Recipe.name: made optional"]),
        .init("making an attribute non-optional with a default backfills NULLs", from: recipe("rating: int16"), to: recipe("rating: {type: int16, optional: false, default: 0}"),
              ["Recipe.rating: made required (NULLs backfilled with '0'), default none -> '0'"]),
        .init("changing a default", from: recipe("rating: {type: int16, default: 0}"), to: recipe("rating: {type: int16, default: 1}"), ["Recipe.rating: default '0' -> '1'"]),
        .init("the same default spelled differently is no change", from: recipe("rating: {type: double, default: 0}"), to: recipe("rating: {type: double, default: 0.0}"), []),

        // Lossless widenings.
        .init("widening Integer 16 to Integer 32", from: recipe("n: int16"), to: recipe("n: int32"), ["Recipe.n: widened from Integer 16 to Integer 32"]),
        .init("widening Integer 32 to Integer 64", from: recipe("n: int32"), to: recipe("n: int64"), ["Recipe.n: widened from Integer 32 to Integer 64"]),
        .init("widening Integer 16 to Integer 64", from: recipe("n: int16"), to: recipe("n: int64"), ["Recipe.n: widened from Integer 16 to Integer 64"]),
        .init("widening Float to Double", from: recipe("n: float"), to: recipe("n: double"), ["Recipe.n: widened from Float to Double"]),
        .init("widening an integer to Decimal", from: recipe("n: int64"), to: recipe("n: decimal"), ["Recipe.n: widened from Integer 64 to Decimal"]),

        // Transient properties have no storage.
        .init("adding a non-optional transient attribute without a default", from: recipe, to: recipe("name: string, cached: {type: string, optional: false, transient: true}"), []),
        .init("removing a transient attribute", from: recipe("name: string, cached: {transient: true}"), to: recipe, []),
        .init("making a stored attribute transient drops its values", from: recipe("name: string, notes: string"), to: recipe("name: string, notes: {type: string, transient: true}"), ["Recipe.notes removed"]),

        // Relationships.
        .init("adding a relationship", from: "Recipe: {}\nChef: {}", to: chefAndRecipes, ["Recipe.chef added", "Chef.recipes added"]),
        .init("removing a relationship", from: chefAndRecipes, to: "Recipe: {}\nChef: {}", ["Recipe.chef removed", "Chef.recipes removed"]),
        .init("renaming a relationship by renaming identifier", from: chefAndRecipes,
              to: "Recipe: {relationships: {cook: {destination: Chef, inverse: recipes, renamingIdentifier: chef}}}\nChef: {relationships: {recipes: {destination: Recipe, inverse: cook, toMany: true}}}",
              ["Recipe.cook renamed from chef"]),
        .init("making a to-one to-many", from: chefAndRecipes,
              to: recipeAndChef(recipe: "destination: Chef, inverse: recipes, toMany: true", chef: "destination: Recipe, inverse: chef, toMany: true"),
              ["Recipe.chef: to-one -> to-many"]),
        .init("making a to-many ordered", from: chefAndRecipes,
              to: recipeAndChef(recipe: "destination: Chef, inverse: recipes", chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true"),
              ["Chef.recipes: made ordered"]),
        .init("making a to-many unordered",
              from: recipeAndChef(recipe: "destination: Chef, inverse: recipes", chef: "destination: Recipe, inverse: chef, toMany: true, ordered: true"),
              to: chefAndRecipes, ["Chef.recipes: made unordered"]),
        .init("changing a delete rule", from: chefAndRecipes,
              to: recipeAndChef(recipe: "destination: Chef, inverse: recipes", chef: "destination: Recipe, inverse: chef, toMany: true, deleteRule: cascade"),
              ["Chef.recipes: delete rule Nullify -> Cascade"]),
        .init("making a to-one required checks the rows", from: chefAndRecipes,
              to: recipeAndChef(recipe: "destination: Chef, inverse: recipes, optional: false", chef: "destination: Recipe, inverse: chef, toMany: true"),
              ["Recipe.chef: made required (data check)"]),
        .init("adding a required to-one checks the rows", from: "Recipe: {}\nChef: {}",
              to: recipeAndChef(recipe: "destination: Chef, inverse: recipes, optional: false", chef: "destination: Recipe, inverse: chef, toMany: true"),
              ["Recipe.chef added (data check)", "Chef.recipes added"]),
        .init("making a to-many required checks nothing: the store does not enforce counts", from: chefAndRecipes,
              to: recipeAndChef(recipe: "destination: Chef, inverse: recipes", chef: "destination: Recipe, inverse: chef, toMany: true, optional: false"),
              ["Chef.recipes: made required"]),
        .init("changing the count bounds of a to-many", from: chefAndRecipes,
              to: recipeAndChef(recipe: "destination: Chef, inverse: recipes", chef: "destination: Recipe, inverse: chef, toMany: true, minCount: 1, maxCount: 5"),
              ["Chef.recipes: min count 0 -> 1, max count 0 -> 5"]),
        .init("giving a relationship an inverse", from: "Recipe: {relationships: {chef: {destination: Chef}}}\nChef: {}", to: chefAndRecipes,
              ["Recipe.chef: inverse none -> recipes", "Chef.recipes added"]),
        .init("a relationship whose destination entity is removed loses its links",
              from: "Recipe: {relationships: {chef: {destination: Chef}}}\nChef: {}",
              to: "Recipe: {relationships: {chef: {destination: Cook}}}\nCook: {}",
              ["Recipe.chef added", "Recipe.chef removed", "add entity Cook", "remove entity Chef"]),

        // Hierarchies.
        .init("adding a parent above an existing root", from: "Dog: {attributes: {bark: string}}",
              to: "Animal: {attributes: {legs: {type: int16, optional: false, default: 4}}}\nDog: {parent: Animal, attributes: {bark: string}}",
              ["add entity Animal", "Dog: parent Animal added", "Dog.legs added"]),
        .init("adding a sub-entity", from: "Animal: {attributes: {name: string}}", to: animals, ["add entity Dog"]),
        .init("moving a property up a hierarchy",
              from: "Animal: {attributes: {name: string}}\nDog: {parent: Animal, attributes: {legs: int16}}\nCat: {parent: Animal, attributes: {legs: int16}}",
              to: "Animal: {attributes: {name: string, legs: int16}}\nDog: {parent: Animal}\nCat: {parent: Animal}",
              ["Animal.legs added", "Dog.legs: moved up from Dog to Animal", "Cat.legs: moved up from Cat to Animal"]),
        .init("moving a property down a hierarchy",
              from: "Animal: {attributes: {name: string, bark: string}}\nDog: {parent: Animal}",
              to: animals, ["Animal.bark removed", "Dog.bark: moved down from Animal to Dog"]),
        .init("moving an entity out of its hierarchy", from: animals,
              to: "Animal: {attributes: {name: string}}\nDog: {attributes: {name: string, bark: string}}",
              ["Dog: parent Animal removed: now a root", "Dog.name: moved down from Animal to Dog"]),
        .init("moving an entity under another parent of its hierarchy",
              from: "Animal: {}\nMammal: {parent: Animal}\nBird: {parent: Animal}\nBat: {parent: Bird}",
              to: "Animal: {}\nMammal: {parent: Animal}\nBird: {parent: Animal}\nBat: {parent: Mammal}",
              ["Bat: parent Bird -> Mammal"]),

        // Stale renaming identifiers never turn a kept element into drop + add.
        .init("an entity identifier naming nothing in the source is ignored", from: recipe, to: "Recipe: {renamingIdentifier: Formula, attributes: {name: string}}", []),
        .init("an entity identifier naming a source entity still present is ignored", from: recipe + "\nChef: {}", to: recipe + "\nChef: {renamingIdentifier: Recipe}", []),
        .init("an attribute identifier naming nothing in the source is ignored", from: recipe, to: recipe("name: {type: string, renamingIdentifier: title}"), []),
        .init("an attribute identifier naming the attribute itself is ignored", from: recipe, to: recipe("name: {type: string, renamingIdentifier: name}"), []),
        .init("an attribute identifier naming a source attribute still present is ignored", from: recipe("name: string, title: string"),
              to: recipe("name: string, title: {type: string, renamingIdentifier: name}"), []),
        .init("an attribute the source has by name is kept although its identifier names a removed one",
              from: recipe("programmed: {type: double, renamingIdentifier: scheduled}, scheduled: double"),
              to: recipe("programmed: {type: double, renamingIdentifier: scheduled}"), ["Recipe.scheduled removed"]),
        .init("an identifier carried along a second rename still renames", from: recipe("directions: {type: string, renamingIdentifier: instructions}"),
              to: recipe("steps: {type: string, renamingIdentifier: instructions}"), ["Recipe.steps renamed from directions"]),
        .init("renaming back to the original name matches the identifier", from: recipe("directions: {type: string, renamingIdentifier: instructions}"),
              to: recipe("instructions: string"), ["Recipe.instructions renamed from directions"]),
        .init("a relationship identifier naming nothing in the source is ignored", from: chefAndRecipes,
              to: recipeAndChef(recipe: "destination: Chef, inverse: recipes, renamingIdentifier: cook", chef: "destination: Recipe, inverse: chef, toMany: true"), []),
    ]

    static let refused: [InferenceCase] = [
        .init("adding a non-optional attribute without a default", from: recipe, to: recipe("name: string, rating: {type: int16, optional: false}"),
              ["Recipe.rating: nonOptionalWithoutDefault"]),
        .init("making an attribute non-optional without a default", from: recipe("rating: int16"), to: recipe("rating: {type: int16, optional: false}"),
              ["Recipe.rating: nonOptionalWithoutDefault"]),
        .init("narrowing Integer 64 to Integer 32", from: recipe("n: int64"), to: recipe("n: int32"), ["Recipe.n: lossyTypeChange"]),
        .init("narrowing Double to Float", from: recipe("n: double"), to: recipe("n: float"), ["Recipe.n: lossyTypeChange"]),
        .init("changing Integer 64 to Double", from: recipe("n: int64"), to: recipe("n: double"), ["Recipe.n: lossyTypeChange"]),
        .init("changing Decimal to an integer", from: recipe("n: decimal"), to: recipe("n: int64"), ["Recipe.n: lossyTypeChange"]),
        .init("changing String to an integer", from: recipe("n: string"), to: recipe("n: int32"), ["Recipe.n: lossyTypeChange"]),
        .init("changing Date to String", from: recipe("n: date"), to: recipe("n: string"), ["Recipe.n: lossyTypeChange"]),
        .init("making a to-many to-one",
              from: recipeAndChef(recipe: "destination: Chef, inverse: recipes, toMany: true", chef: "destination: Recipe, inverse: chef, toMany: true"),
              to: chefAndRecipes, ["Recipe.chef: toManyToToOne"]),
        .init("pointing a relationship at another existing entity",
              from: "Recipe: {relationships: {chef: {destination: Chef}}}\nChef: {}\nCook: {}",
              to: "Recipe: {relationships: {chef: {destination: Cook}}}\nChef: {}\nCook: {}",
              ["Recipe.chef: relationshipDestinationChanged"]),
        .init("putting an existing root under another existing root merges two tables",
              from: "Animal: {}\nPlant: {}", to: "Animal: {}\nPlant: {parent: Animal}", ["Plant: mergedHierarchies"]),
        .init("putting two existing roots under a new parent merges two tables",
              from: "Dog: {}\nCat: {}", to: "Animal: {}\nDog: {parent: Animal}\nCat: {parent: Animal}", ["Cat: mergedHierarchies"]),
        .init("moving a sub-entity into another existing hierarchy",
              from: "Animal: {}\nDog: {parent: Animal}\nPlant: {}", to: "Animal: {}\nPlant: {}\nDog: {parent: Plant}", ["Dog: mergedHierarchies"]),
        .init("making a concrete entity abstract", from: "Animal: {attributes: {name: string}}",
              to: "Animal: {abstract: true, attributes: {name: string}}\nDog: {parent: Animal}", ["Animal: madeAbstract"]),
        .init("two entities claiming one renaming identifier", from: recipe,
              to: "Dish: {renamingIdentifier: Recipe, attributes: {name: string}}\nMeal: {renamingIdentifier: Recipe, attributes: {name: string}}",
              ["Meal: contestedRenamingIdentifier"]),
        .init("every blocking change is named, not just the first",
              from: recipe("name: string, rating: int16, n: int64"),
              to: recipe("name: string, rating: {type: int16, optional: false}, n: int32, serves: {type: int16, optional: false}"),
              ["Recipe.rating: nonOptionalWithoutDefault", "Recipe.n: lossyTypeChange", "Recipe.serves: nonOptionalWithoutDefault"]),
        .init("an inherited attribute is refused once, at the entity declaring it",
              from: "Animal: {}\nDog: {parent: Animal}\nCat: {parent: Animal}",
              to: "Animal: {attributes: {legs: {type: int16, optional: false}}}\nDog: {parent: Animal}\nCat: {parent: Animal}",
              ["Animal.legs: nonOptionalWithoutDefault"]),
        .init("a new parent's non-optional attribute without a default needs values for the existing rows below it",
              from: "Dog: {attributes: {bark: string}}",
              to: "Animal: {attributes: {legs: {type: int16, optional: false}}}\nDog: {parent: Animal, attributes: {bark: string}}",
              ["Animal.legs: nonOptionalWithoutDefault"]),
    ]
}
