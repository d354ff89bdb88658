import Foundation
import Testing
import ObjectModel
@testable import Mapping

/// Which files beside a model are its mapping models (issues 9.3 and 9.8).
@Suite struct MappingModelFinderTests {
    static func model(_ format: VersionedModel.Format, path: String, versions: [String]) -> VersionedModel {
        VersionedModel(name: "Recipes", versions: [], currentVersionName: versions.last!, path: path, format: format, versionNames: versions)
    }

    static let mapping = MappingModelLoaderTests.mapping

    @Test func besideANativeModelAFileThatCannotBeReadIsAWarningAndTheOthersAreFound() throws {
        try withTemporaryDirectory { directory in
            try write("name: Recipes\nversions: [Recipes 2, Recipes 3]\n", to: directory + "/model.yaml")
            // A version file that cannot be read is the model's problem, not a mapping model's.
            try write("entities: [unclosed\n", to: directory + "/Recipes 2.yaml")
            try write(Self.mapping, to: directory + "/recipes-2-to-3.yaml")
            try write("{\"broken\": ", to: directory + "/data.json")
            try write("steps:\n  - run: make\n", to: directory + "/ci.yml")
            let found = try MappingModelFinder.find(beside: Self.model(.native, path: directory, versions: ["Recipes 2", "Recipes 3"]))
            #expect(found.mappingModels.map { ($0.file as NSString).lastPathComponent } == ["recipes-2-to-3.yaml"])
            #expect(found.warnings.map(\.file) == [directory + "/data.json"])
            #expect(found.warnings.first?.description.hasPrefix("\(directory)/data.json: passed over: cannot be read as a mapping model (line ") == true)
        }
    }

    @Test func aMappingModelWithErrorsBesideANativeModelIsStillAnError() throws {
        try withTemporaryDirectory { directory in
            try write(Self.mapping.replacingOccurrences(of: "type: copy", with: "type: cp"), to: directory + "/a.yaml")
            let error = #expect(throws: MappingLoadError.self) {
                try MappingModelFinder.find(beside: Self.model(.native, path: directory, versions: ["Recipes 2", "Recipes 3"]))
            }
            #expect(error?.issues.map(\.file) == [directory + "/a.yaml"])
        }
    }

    @Test func inAFolderPassedByTheUserAFileThatCannotBeReadIsAnError() throws {
        try withTemporaryDirectory { directory in
            try write(Self.mapping, to: directory + "/recipes-2-to-3.yaml")
            try write("{\"broken\": ", to: directory + "/data.json")
            let error = #expect(throws: MappingLoadError.self) { try MappingModelFinder.find(inDirectories: [directory]) }
            #expect(error?.issues.map(\.file) == [directory + "/data.json"])
        }
    }

    @Test func besideAnXcodeModelOnlyItsOwnMappingPackagesAreRead() throws {
        try withTemporaryDirectory { directory in
            try write("{\"broken\": ", to: directory + "/data.json")
            try write(Self.mapping, to: directory + "/recipes-2-to-3.yaml")
            var own = XcodeMappingLoaderTests.recipesStore()
            try write(own.xml, to: directory + "/Own.xcmappingmodel/xcmapping.xml")
            // Names this package, with a version it does not have: kept, so that it is reported.
            own.destinationModelPath = "Recipes/Recipes.xcdatamodeld/Recipe 3.xcdatamodel"
            try write(own.xml, to: directory + "/Typo.xcmappingmodel/xcmapping.xml")
            // Another package's mapping model.
            own.sourceModelPath = "Other.xcdatamodeld/Other 1.xcdatamodel"
            own.destinationModelPath = "Other.xcdatamodeld/Other 2.xcdatamodel"
            try write(own.xml, to: directory + "/Other.xcmappingmodel/xcmapping.xml")
            let found = try MappingModelFinder.find(beside: Self.model(.xcode, path: directory + "/Recipes.xcdatamodeld", versions: ["Recipes 2", "Recipes 3"]))
            #expect(found.mappingModels.map { ($0.file as NSString).lastPathComponent } == ["Own.xcmappingmodel", "Typo.xcmappingmodel"])
            #expect(found.warnings.isEmpty)
        }
    }

    @Test func aMappingModelNamingAVersionTheModelDoesNotHaveNamesTheClosestOne() {
        let model = Self.model(.native, path: "temps", versions: ["Temps 1", "Temps 2"])
        let mapping = MappingModel(source: "Temp 1", destination: "Temps 2", entityMappings: [], file: "temps/t.yaml")
        #expect(MappingModelValidator.versionIssues(mapping, model: model).map(\.description) == [
            "temps/t.yaml: its source names version 'Temp 1', which Recipes does not have; did you mean 'Temps 1'? (versions: Temps 1, Temps 2)",
        ])
        let both = MappingModel(source: "Temps 2", destination: "Temps 22", entityMappings: [], file: "temps/t.yaml")
        #expect(MappingModelValidator.versionIssues(both, model: model).map(\.message) == [
            "its destination names version 'Temps 22', which Recipes does not have; did you mean 'Temps 2'? (versions: Temps 1, Temps 2)",
        ])
        #expect(MappingModelValidator.versionIssues(MappingModel(source: "Temps 1", destination: "Temps 2", entityMappings: [], file: "t"), model: model).isEmpty)
    }
}
