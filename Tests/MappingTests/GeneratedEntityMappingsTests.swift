import Testing
@testable import Mapping
import ObjectModel

/// The entity mappings a native mapping file gets for the destination entities it does not
/// mention, as Xcode generates them.
@Suite struct GeneratedEntityMappingsTests {
    static func entity(_ name: String, parent: String? = nil, isAbstract: Bool = false, renamingIdentifier: String? = nil) -> Entity {
        Entity(name: name, parent: parent, isAbstract: isAbstract, renamingIdentifier: renamingIdentifier, attributes: [Attribute(name: "name", type: .string)])
    }

    static let source = ModelVersion(name: "Kitchen 1", entities: [
        entity("Recipe"), entity("Chef"), entity("Pantry"), entity("Note"), entity("Base", isAbstract: true), entity("Tip", parent: "Base"),
    ])
    static let destination = ModelVersion(name: "Kitchen 2", entities: [
        entity("Recipe"), entity("Chef"), entity("Larder", renamingIdentifier: "Pantry"), entity("Person", renamingIdentifier: "Note"),
        entity("Note"), entity("Base", isAbstract: true), entity("Tip", parent: "Base"), entity("Brand"),
    ])

    static func native(_ entityMappings: [EntityMappingDefinition]) -> MappingModel {
        MappingModel(source: "Kitchen 1", destination: "Kitchen 2", entityMappings: entityMappings, file: "kitchen.yaml", generatesUnmentionedEntityMappings: true)
    }

    static let recipeToRecipe = EntityMappingDefinition(name: "RecipeToRecipe", type: .transform, sourceEntity: "Recipe", destinationEntity: "Recipe")

    @Test func eachUnmentionedConcreteDestinationEntityIsCopiedFromItsSourceEntityByNameOrRenamingIdentifier() {
        let completed = Self.native([Self.recipeToRecipe]).completed(source: Self.source, destination: Self.destination)
        // Larder renames Pantry; Person's identifier names Note, which the destination still
        // has: stale, and Person has no source entity of its name. Base is abstract, Brand new.
        #expect(completed.entityMappings == [
            Self.recipeToRecipe,
            EntityMappingDefinition(name: "ChefToChef", type: .copy, sourceEntity: "Chef", destinationEntity: "Chef"),
            EntityMappingDefinition(name: "PantryToLarder", type: .copy, sourceEntity: "Pantry", destinationEntity: "Larder"),
            EntityMappingDefinition(name: "NoteToNote", type: .copy, sourceEntity: "Note", destinationEntity: "Note"),
            EntityMappingDefinition(name: "TipToTip", type: .copy, sourceEntity: "Tip", destinationEntity: "Tip"),
        ])
    }

    @Test func noneComesFromASourceEntityTheFileReadsAlreadyNorUnderATakenName() {
        let chefToPerson = EntityMappingDefinition(name: "ChefToChef", type: .transform, sourceEntity: "Chef", destinationEntity: "Person")
        let dropNotes = EntityMappingDefinition(name: "DropNotes", type: .remove, sourceEntity: "Note", destinationEntity: nil)
        let pantry = EntityMappingDefinition(name: "TipToTip", type: .transform, sourceEntity: "Pantry", destinationEntity: "Recipe")
        let completed = Self.native([chefToPerson, dropNotes, pantry]).completed(source: Self.source, destination: Self.destination)
        // Chef and Note are read (transformed, removed): no copy of them; Recipe is made by
        // TipToTip, so none for it; Tip's name is taken.
        #expect(completed.entityMappings.dropFirst(3).map(\.name) == ["TipToTip2"])
        #expect(completed.entityMappings.dropFirst(3).map(\.sourceEntity) == ["Tip"])
    }

    @Test func anEmptyNativeFileCopiesEveryEntityAndAnXcodeOrInCodeMappingModelRunsAsWritten() {
        let empty = Self.native([]).completed(source: Self.source, destination: Self.destination)
        #expect(empty.entityMappings.map(\.name) == ["RecipeToRecipe", "ChefToChef", "PantryToLarder", "NoteToNote", "TipToTip"])
        let asWritten = MappingModel(source: "Kitchen 1", destination: "Kitchen 2", entityMappings: [Self.recipeToRecipe], file: "kitchen.xcmappingmodel")
        #expect(asWritten.completed(source: Self.source, destination: Self.destination) == asWritten)
    }

    @Test func theNativeLoaderMarksItsModelsForGeneration() throws {
        let loaded = try NativeMappingLoader.parse("source: Kitchen 1\ndestination: Kitchen 2\nentityMappings: []\n", file: "kitchen.yaml")
        #expect(loaded.generatesUnmentionedEntityMappings)
    }
}
