import Foundation
import Testing
import TestSupport
@testable import Mapping

@Suite struct MappingModelLoaderTests {
    static let mapping = """
        source: Recipes 2
        destination: Recipes 3
        entityMappings:
          - {name: RecipeToRecipe, type: copy, source: Recipe, destination: Recipe}
        """

    @Test func loadAllFindsMappingModelsBesideAModelAndSkipsTheModelsOwnFiles() throws {
        try withTemporaryDirectory { directory in
            try write("name: Recipes\nversions: [Recipes 2, Recipes 3]\n", to: directory + "/model.yaml")
            try write("entities:\n  Recipe:\n    attributes: {name: string}\n", to: directory + "/Recipes 2.yaml")
            try write(Self.mapping, to: directory + "/b-2-to-3.yml")
            try write(#"{"source": "Recipes 1", "destination": "Recipes 2", "entityMappings": []}"#, to: directory + "/a-1-to-2.json")
            try write(XcodeMappingLoaderTests.recipesStore().xml, to: directory + "/c.xcmappingmodel/xcmapping.xml")
            try write(Self.mapping, to: directory + "/nested/d.yaml")
            try write(Self.mapping, to: directory + "/notes.txt")
            try write("", to: directory + "/empty.yaml")

            let models = try MappingModelLoader.loadAll(directories: [directory])
            #expect(models.map { ($0.file as NSString).lastPathComponent } == ["a-1-to-2.json", "b-2-to-3.yml", "c.xcmappingmodel"])
            #expect(models.map(\.source) == ["Recipes 1", "Recipes 2", "Recipes 2"])
        }
    }

    @Test func loadAllReportsTheProblemsOfEveryFileTogether() throws {
        try withTemporaryDirectory { directory in
            try write(Self.mapping.replacingOccurrences(of: "type: copy", with: "type: cp"), to: directory + "/a.yaml")
            try write(Self.mapping.replacingOccurrences(of: "source: Recipes 2", with: "sorce: Recipes 2"), to: directory + "/b.yaml")
            let error = #expect(throws: MappingLoadError.self) {
                try MappingModelLoader.loadAll(directories: [directory, directory + "/missing"])
            }
            #expect(error?.issues.map(\.description) == [
                "\(directory)/a.yaml:4:34: entity mapping RecipeToRecipe: unknown type 'cp' (expected add, remove, copy, transform or custom)",
                "\(directory)/b.yaml:1:1: unknown key 'sorce' in the mapping model (expected one of: destination, entityMappings, source)",
                "\(directory)/missing: cannot read the mapping models directory",
            ])
        }
    }

    @Test func loadDispatchesOnTheExtension() throws {
        try withTemporaryDirectory { directory in
            try write(Self.mapping, to: directory + "/m.yaml")
            #expect(try MappingModelLoader.load(path: directory + "/m.yaml").entityMappings.map(\.name) == ["RecipeToRecipe"])
            let error = #expect(throws: MappingLoadError.self) { try MappingModelLoader.load(path: directory + "/m.plist") }
            #expect(error?.description == "\(directory)/m.plist: not a mapping model: expected a .yaml, .yml, .json or .xcmappingmodel file")
        }
    }

    @Test func aCorpusRepositoryFolderHoldsElevenDeltaMappingModels() throws {
        let models = try MappingModelLoader.loadAll(directories: [Corpus.root + "/rileytestut__Delta"])
        #expect(models.count == 11)
        #expect(models.allSatisfy { $0.source.hasPrefix("Delta") && $0.destination.hasPrefix("Delta ") })
    }
}
