import Foundation
import Testing
@testable import ObjectModel

@Suite struct NativeModelLoaderTests {
    @Test func theRecipesModelLoadsWithThreeVersionsInOrder() throws {
        let model = try ModelLoader.loadValidated(path: Paths.migrations)
        #expect(model.name == "Recipes")
        #expect(model.versions.map(\.name) == ["Recipes 1", "Recipes 2", "Recipes 3"])
        #expect(model.currentVersionName == "Recipes 3")
        let recipe = try #require(model.currentVersion.entity(named: "Recipe"))
        #expect(recipe.attribute(named: "directions")?.renamingIdentifier == "instructions")
        #expect(recipe.attribute(named: "rating")?.isOptional == false)
        #expect(recipe.relationship(named: "ingredients")?.isToMany == true)
        #expect(recipe.relationship(named: "ingredients")?.deleteRule == .cascade)
    }

    @Test func malformedYAMLNamesTheFile() {
        let error = #expect(throws: ModelIssue.self) {
            try NativeModelLoader.parseVersion("entities:\n  Recipe: [unclosed\n", name: "v1", file: "models/v1.yaml")
        }
        #expect(error?.description.hasPrefix("models/v1.yaml") == true)
        #expect(error?.description.contains("malformed YAML") == true)
    }

    @Test func anUnknownKeyNamesTheEntityPropertyAndLine() {
        let text = """
            entities:
              Recipe:
                attributes:
                  name: {type: string, optinal: true}
            """
        let error = #expect(throws: ModelIssue.self) {
            try NativeModelLoader.parseVersion(text, name: "v1", file: "v1.yaml")
        }
        #expect(error?.entity == "Recipe")
        #expect(error?.property == "name")
        #expect(error?.line != nil)
        #expect(error?.description.contains("unknown key 'optinal'") == true)
    }

    @Test func anUnknownTypeIsRejected() {
        let error = #expect(throws: ModelIssue.self) {
            try NativeModelLoader.parseVersion("entities:\n  A:\n    attributes:\n      x: integer128\n", name: "v", file: "v.yaml")
        }
        #expect(error?.description == "v.yaml:4:10: entity A, property x: unknown attribute type 'integer128'")
    }

    @Test func jsonIsAccepted() throws {
        let version = try NativeModelLoader.parseVersion(
            #"{"entities": {"A": {"attributes": {"x": {"type": "int64", "optional": false, "default": "3"}}}}}"#,
            name: "v", file: "v.json"
        )
        #expect(version.entity(named: "A")?.attribute(named: "x")?.type == .integer64)
        #expect(ModelValidator.validate(version).isEmpty)
    }

    @Test func aVersionWrittenAndReadBackIsTheSame() throws {
        let model = try ModelLoader.load(path: Paths.migrations)
        for version in model.versions {
            let text = NativeModelWriter.json(of: version)
            var back = try NativeModelLoader.parseVersion(text, name: version.name, file: version.sourceFile)
            back.sourceFile = version.sourceFile
            #expect(back == version)
            #expect(VersionHash.hashes(of: back) == VersionHash.hashes(of: version))
        }
    }

    @Test func aMissingVersionFileIsNamed() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("native-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "name: M\nversions: [v1, v2]\n".write(toFile: folder + "/model.yaml", atomically: true, encoding: .utf8)
        try "entities: {}\n".write(toFile: folder + "/v1.yaml", atomically: true, encoding: .utf8)
        let error = #expect(throws: ModelLoadError.self) { try ModelLoader.load(path: folder) }
        #expect(error?.description.contains("version 'v2' has no file v2.yaml") == true)
    }
}
