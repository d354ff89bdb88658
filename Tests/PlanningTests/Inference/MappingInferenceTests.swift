import Testing
import ObjectModel
@testable import Planning

@Suite struct MappingInferenceTests {
    @Test(arguments: InferenceCases.accepted)
    func inferable(_ row: RuleCase) throws {
        let result = try InferenceFixtures.infer(row.source, row.destination)
        let mapping = try #require(result.mapping, "refused: \(result.refusals)")
        #expect(InferenceFixtures.summary(mapping) == row.expected)
    }

    @Test(arguments: InferenceCases.refused)
    func refused(_ row: RuleCase) throws {
        let result = try InferenceFixtures.infer(row.source, row.destination)
        #expect(!result.isInferable)
        #expect(InferenceFixtures.culprits(result.refusals) == row.expected)
    }

    // MARK: The Recipes chain (migrations/)

    static let recipesV2 = ["Recipe.cuisine added", "add entity Cuisine"]
    static let recipesV3 = [
        "Recipe.directions renamed from instructions",
        "Recipe.rating: made required (NULLs backfilled with '0'), default none -> '0'",
    ]

    @Test func recipes1To2AddsCuisine() throws {
        let model = try Fixtures.model("migrations")
        let mapping = try #require(MappingInference.infer(from: model.versions[0], to: model.versions[1]).mapping)
        #expect(InferenceFixtures.summary(mapping) == Self.recipesV2)
        #expect(!mapping.hasDataLoss)
        #expect(mapping.source == "Recipes 1" && mapping.destination == "Recipes 2")
    }

    @Test func recipes2To3RenamesInstructionsAndBackfillsRating() throws {
        let model = try Fixtures.model("migrations")
        let mapping = try #require(MappingInference.infer(from: model.versions[1], to: model.versions[2]).mapping)
        #expect(InferenceFixtures.summary(mapping) == Self.recipesV3)
        let rating = mapping.mapping(forDestinationEntity: "Recipe")?.attributeMappings.first { $0.destination == "rating" }
        #expect(rating?.changes.first == .madeRequired(backfill: "0"))
    }

    @Test func recipes1To3IsInferredDirectly() throws {
        let model = try Fixtures.model("migrations")
        let mapping = try #require(MappingInference.infer(from: model.versions[0], to: model.versions[2]).mapping)
        #expect(InferenceFixtures.summary(mapping) == [Self.recipesV3[0], Self.recipesV3[1], Self.recipesV2[0], Self.recipesV2[1]])
    }

    @Test func aRefusalSaysWhatChangedWhereAndWhatToDo() throws {
        let model = try Fixtures.model("migrations")
        var destination = model.versions[2]
        let recipe = destination.entities.firstIndex { $0.name == "Recipe" }!
        let rating = destination.entities[recipe].attributes.firstIndex { $0.name == "rating" }!
        destination.entities[recipe].attributes[rating].defaultValue = nil
        let refusals = MappingInference.infer(from: model.versions[1], to: destination).refusals
        #expect(refusals.map(\.description) == [
            "entity Recipe, property rating: made non-optional without a default; existing rows would need a value invented (give it a default, or write a mapping model)",
        ])
    }

    // MARK: Data loss and order

    @Test func removingAnEntityAttributeOrRelationshipLosesData() throws {
        let removals = [
            (InferenceCases.recipe + "\nCuisine: {}", InferenceCases.recipe),
            (InferenceCases.recipe("name: string, notes: string"), InferenceCases.recipe),
            (InferenceCases.chefAndRecipes, "Recipe: {}\nChef: {}"),
        ]
        for (source, destination) in removals {
            let mapping = try #require(try InferenceFixtures.infer(source, destination).mapping)
            #expect(mapping.hasDataLoss)
        }
    }

    @Test func additionsRenamesAndWideningsLoseNothing() throws {
        for row in InferenceCases.accepted where !row.expected.contains(where: { $0.contains("remove") }) {
            let mapping = try #require(try InferenceFixtures.infer(row.source, row.destination).mapping)
            #expect(!mapping.hasDataLoss, "\(row.behaviour)")
        }
    }

    @Test func anAbstractParentHasNoRowsOfItsOwnToLose() throws {
        let mapping = try #require(try InferenceFixtures.infer(
            "Animal: {abstract: true, attributes: {bark: string}}\nDog: {parent: Animal}",
            "Animal: {abstract: true}\nDog: {parent: Animal, attributes: {bark: string}}"
        ).mapping)
        #expect(InferenceFixtures.summary(mapping) == ["Animal.bark removed", "Dog.bark: moved down from Animal to Dog"])
        #expect(!mapping.hasDataLoss)
    }

    @Test func mappingsFollowTheDestinationThenRemovedSourceEntities() throws {
        let mapping = try #require(try InferenceFixtures.infer("A: {}\nB: {}\nC: {}\nD: {}", "D: {}\nE: {}\nB: {}").mapping)
        #expect(mapping.entityMappings.map { "\($0.kind.rawValue) \($0.sourceEntity ?? "-") \($0.destinationEntity ?? "-")" } == [
            "copy D D", "add - E", "copy B B", "remove A -", "remove C -",
        ])
        #expect(try InferenceFixtures.infer("A: {}\nB: {}\nC: {}\nD: {}", "D: {}\nE: {}\nB: {}").mapping == mapping)
    }

    @Test func anUnchangedVersionCopiesEverything() throws {
        let model = try Fixtures.model("migrations")
        let mapping = try #require(MappingInference.infer(from: model.versions[2], to: model.versions[2]).mapping)
        #expect(InferenceFixtures.summary(mapping).isEmpty)
        #expect(mapping.entityMappings.map(\.kind) == [.copy, .copy, .copy, .copy])
        #expect(!mapping.needsDataCheck)
    }
}
