import Foundation
import Testing
@testable import ObjectModel

@Suite struct XcodeModelLoaderTests {
    @Test func truncatedXMLNamesTheFile() {
        let text = #"<?xml version="1.0"?><model><entity name="A"><attribute name="x" attributeType="Str"#
        var warnings: [ModelIssue] = []
        let error = #expect(throws: ModelIssue.self) {
            try XcodeModelLoader.parseContents(Data(text.utf8), name: "v", file: "Model.xcdatamodeld/v.xcdatamodel/contents", warnings: &warnings)
        }
        #expect(error?.description.hasPrefix("Model.xcdatamodeld/v.xcdatamodel/contents:1: malformed XML") == true, "\(String(describing: error))")
    }

    @Test func versionsSortInNaturalOrder() {
        let names = ["Model 10", "Model 2", "Model", "Model 9", "Model 100"]
        #expect(names.sorted(by: XcodeModelLoader.naturalOrder) == ["Model", "Model 2", "Model 9", "Model 10", "Model 100"])
    }

    @Test func quirkyDefaultsAreReadLenientlyWithAWarning() throws {
        let text = """
            <model>
              <entity name="A">
                <attribute name="count" attributeType="Integer 64" defaultValueString="0.0"/>
                <attribute name="flag" attributeType="Integer 16" defaultValueString="NO"/>
                <attribute name="flag2" attributeType="Boolean" defaultValueString="0"/>
                <attribute name="label" attributeType="String" defaultValueString=""/>
                <attribute name="scratch" transient="YES"/>
                <attribute name="odd" optional="YES" attributeType="Date" defaultValueString="soon"/>
              </entity>
            </model>
            """
        var warnings: [ModelIssue] = []
        let version = try XcodeModelLoader.parseContents(Data(text.utf8), name: "v", file: "contents", warnings: &warnings)
        let entity = try #require(version.entity(named: "A"))
        #expect(entity.attribute(named: "count")?.defaultValue == "0")
        #expect(entity.attribute(named: "flag")?.defaultValue == "0")
        #expect(entity.attribute(named: "flag2")?.defaultValue == "0")
        #expect(entity.attribute(named: "label")?.defaultValue == "")
        #expect(entity.attribute(named: "scratch")?.type == .undefined)
        #expect(entity.attribute(named: "odd")?.defaultValue == nil)
        #expect(warnings.map(\.description) == [
            "contents: entity A, property count: default '0.0' on Integer 64 read as 0",
            "contents: entity A, property flag: default 'NO' on Integer 16 read as 0",
            "contents: entity A, property odd: default 'soon' does not parse as Date; ignored",
        ])
        #expect(ModelValidator.validate(version).isEmpty)
    }

    @Test func theFixturePackageReadsItsCurrentVersion() throws {
        let model = try ModelLoader.load(path: Paths.fixtures + "/Recipes.xcdatamodeld")
        #expect(model.name == "Recipes")
        #expect(model.currentVersionName == "Recipes 1")
        #expect(model.currentVersion.versionIdentifiers == ["1.0"])
        #expect(model.currentVersion.entity(named: "Recipe")?.uniquenessConstraints == [["name"]])
    }
}
