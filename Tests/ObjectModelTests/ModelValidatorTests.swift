import Testing
@testable import ObjectModel

@Suite struct ModelValidatorTests {
    static func issues(_ yaml: String) throws -> [String] {
        let version = try NativeModelLoader.parseVersion(yaml, name: "v", file: "v.yaml")
        return ModelValidator.validate(version).map(\.description)
    }

    @Test(arguments: [
        (
            "entities:\n  A:\n    relationships:\n      b: {destination: B}\n",
            "v.yaml: entity A, property b: destination entity 'B' does not exist"
        ),
        (
            "entities:\n  A:\n    relationships:\n      b: {destination: B, inverse: a}\n  B: {}\n",
            "v.yaml: entity A, property b: inverse 'a' does not exist on B"
        ),
        (
            "entities:\n  A:\n    relationships:\n      b: {destination: B, inverse: x}\n  B:\n    relationships:\n      x: {destination: C, inverse: y}\n  C:\n    relationships:\n      y: {destination: B, inverse: x}\n",
            "v.yaml: entity A, property b: inverse mismatch: B.x points to C, not A"
        ),
        (
            "entities:\n  A: {parent: B}\n  B: {parent: A}\n",
            "v.yaml: entity A: inheritance cycle: A -> B -> A"
        ),
        (
            "entities:\n  A: {parent: Z}\n",
            "v.yaml: entity A: parent entity 'Z' does not exist"
        ),
        (
            "entities:\n  A:\n    attributes:\n      n: {type: int16, optional: false, default: 'NO'}\n",
            "v.yaml: entity A, property n: default 'NO' does not parse as Integer 16"
        ),
        (
            "entities:\n  A:\n    attributes:\n      paintColor: string\n      paint_color: string\n",
            "v.yaml: entity A, property paint_color: maps onto column 'paint_color' of table 'a', like A.paintColor"
        ),
        (
            "entities:\n  RecipeBox: {}\n  Recipe_box: {}\n",
            "v.yaml: entity Recipe_box: maps onto table 'recipe_box', like entity RecipeBox"
        ),
        (
            "entities:\n  A:\n    attributes:\n      _pk: int64\n",
            "v.yaml: entity A, property _pk: maps onto the system column '_pk'"
        ),
        (
            "entities:\n  A:\n    attributes:\n      x: string\n  B:\n    parent: A\n    attributes:\n      x: string\n",
            "v.yaml: entity B, property x: the property is already defined by a parent entity"
        ),
    ])
    func invalidModelsAreRejectedNamingTheCulprit(yaml: String, expected: String) throws {
        let issues = try Self.issues(yaml)
        #expect(issues.contains(expected), "got \(issues)")
    }

    @Test func siblingsMayShareAnAttributeColumn() throws {
        let yaml = "entities:\n  A: {abstract: true}\n  B:\n    parent: A\n    attributes:\n      x: string\n  C:\n    parent: A\n    attributes:\n      x: string\n"
        #expect(try Self.issues(yaml).isEmpty)
    }

    @Test func theRecipesModelIsValid() throws {
        let model = try ModelLoader.load(path: Paths.migrations)
        for version in model.versions {
            #expect(ModelValidator.validate(version).isEmpty)
        }
    }
}
